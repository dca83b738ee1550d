import { afterAll, describe, expect, it } from '@jest/globals';
import { Kvm } from '@nats-io/kv';
import { eventually, testNatsPrefix } from '@strata/testing';
import { loadConfig } from '../src/config/load-config.js';
import { ServiceConfig } from '../src/config/service-config.js';
import { NatsConnectionHolder } from '../src/nats/nats.provider.js';
import { FirstUseStore } from '../src/replay/first-use.store.js';

describe('FirstUseStore against a real NATS server', () => {
  const config = loadConfig(ServiceConfig, {
    ...process.env,
    STRATA_ENV: 'development',
    NATS_PREFIX: testNatsPrefix(),
  });
  const bucket = `${config.NATS_PREFIX}_first_use`;
  // Two replicas, each with its own connection and store, on one bucket whose keys live 1.5 s.
  const replicas = [0, 1].map(() => new NatsConnectionHolder(config));
  const stores = replicas.map((nats) => new FirstUseStore(nats, bucket, 1500));

  afterAll(async () => {
    const nc = await replicas[0]!.get();
    await (await new Kvm(nc).open(bucket)).destroy();
    await Promise.all(replicas.map((r) => r.onApplicationShutdown()));
  });

  it('answers true for a key once, on whichever replica, and false for every repeat', async () => {
    expect(await stores[0]!.firstUse('trigger-1.aaaa')).toBe(true);
    expect(await stores[1]!.firstUse('trigger-1.aaaa')).toBe(false);
    expect(await stores[0]!.firstUse('trigger-1.aaaa')).toBe(false);
    expect(await stores[1]!.firstUse('trigger-1.bbbb')).toBe(true);
  });

  it('lets exactly one of many racing offers of a key through', async () => {
    const offers = Array.from({ length: 40 }, (_, i) => stores[i % 2]!.firstUse('trigger-1.race'));
    expect((await Promise.all(offers)).filter(Boolean)).toHaveLength(1);
  });

  it('forgets a key once its time has passed', async () => {
    expect(await stores[0]!.firstUse('trigger-2.once')).toBe(true);
    expect(await stores[1]!.firstUse('trigger-2.once')).toBe(false);
    // The server drops expired keys on its own schedule: offered again until it has (false meanwhile).
    expect(await eventually(async () => (await stores[1]!.firstUse('trigger-2.once')) || undefined, 15_000, 250)).toBe(
      true,
    );
  });
});
