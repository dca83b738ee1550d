import { afterAll, describe, expect, it } from '@jest/globals';
import { Kvm } from '@nats-io/kv';
import { ManualClock, testNatsPrefix } from '@strata/testing';
import { loadConfig } from '../src/config/load-config.js';
import { ServiceConfig } from '../src/config/service-config.js';
import { NatsConnectionHolder } from '../src/nats/nats.provider.js';
import { NatsKvRateLimitStore } from '../src/rate-limit/rate-limit.store.js';

describe('NatsKvRateLimitStore against a real NATS server', () => {
  const config = loadConfig(ServiceConfig, {
    ...process.env,
    STRATA_ENV: 'development',
    NATS_PREFIX: testNatsPrefix(),
  });
  // Windows are counted on this clock: 30 s into a minute window, until a test moves it.
  const minute = Math.floor(Date.now() / 60_000) * 60_000;
  const clock = new ManualClock(minute + 30_000);
  // Three replicas: each has its own connection and its own store.
  const replicas = [0, 1, 2].map(() => new NatsConnectionHolder(config));
  const stores = replicas.map((nats) => new NatsKvRateLimitStore(nats, config, clock));

  afterAll(async () => {
    const nc = await replicas[0]!.get();
    await (await new Kvm(nc).open(`${config.NATS_PREFIX}_ratelimit`)).destroy();
    await Promise.all(replicas.map((r) => r.onApplicationShutdown()));
  });

  it('counts every hit exactly once when replicas race on one key', async () => {
    const hits = Array.from({ length: 300 }, (_, i) => stores[i % 3]!.hit('ws.race.read', 60_000));
    const counts = (await Promise.all(hits)).map((h) => h.count).sort((a, b) => a - b);
    expect(counts).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
  });

  it('keeps separate keys and windows apart, and reports when the window ends', async () => {
    const a = await stores[0]!.hit('ws.a.write', 60_000);
    const b = await stores[1]!.hit('ws.b.write', 60_000);
    expect([a.count, b.count]).toEqual([1, 1]);
    expect(a.resetAt).toBe(minute + 60_000);
    expect((await stores[2]!.hit('ws.a.write', 60_000)).count).toBe(2);

    // The last millisecond of the window still counts in it; the next window starts afresh.
    clock.advance(30_000 - 1);
    expect(await stores[1]!.hit('ws.a.write', 60_000)).toEqual({ count: 3, resetAt: minute + 60_000 });
    clock.advance(1);
    expect(await stores[0]!.hit('ws.a.write', 60_000)).toEqual({ count: 1, resetAt: minute + 120_000 });
  });
});
