import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { issueWorkspaceScope, type WorkspaceScope } from '@strata/db';
import { loadConfig, NatsConnectionHolder } from '@strata/platform';
import { eventually, ManualClock, testNatsPrefix } from '@strata/testing';
import { ComputeConfig } from '../src/compute.config.js';
import { EndpointLookups } from '../src/endpoints/endpoint-lookups.js';
import { TriggerChanges } from '../src/triggers/trigger-changes.js';
import type { TriggerEntity } from '../src/triggers/trigger.entity.js';
import type { TriggersRepository } from '../src/triggers/triggers.repository.js';

/** The endpoints of a fake store: what each replica reads, and how often. */
class Endpoints {
  reads = 0;
  readonly at = new Map<string, string>();

  repository(): TriggersRepository {
    return {
      endpointAt: async (scope: WorkspaceScope, path: string) => {
        this.reads++;
        const version = this.at.get(`${scope.workspace}/${path}`);
        if (version === undefined) return undefined;
        const trigger = { id: `${scope.workspace}-${path}`, metadata: { path } } as unknown as TriggerEntity;
        return { trigger, fn: { id: 'fn', version: Number(version), codeHash: version } };
      },
    } as unknown as TriggersRepository;
  }
}

describe('EndpointLookups on two replicas, over a real NATS server', () => {
  const config = loadConfig(ComputeConfig, {
    ...process.env,
    STRATA_ENV: 'development',
    NATS_PREFIX: testNatsPrefix(),
    COMPUTE_ENDPOINT_CACHE_MS: '2000',
  });
  const clock = new ManualClock();
  const store = new Endpoints();
  const replicas = [0, 1].map(() => {
    const nats = new NatsConnectionHolder(config);
    const changes = new TriggerChanges(nats, config);
    return { nats, changes, lookups: new EndpointLookups(store.repository(), clock, config, changes) };
  });
  const a = issueWorkspaceScope('lookups-a');
  const b = issueWorkspaceScope('lookups-b');
  const version = async (replica: number, scope: WorkspaceScope, path: string) =>
    (await replicas[replica]!.lookups.find(scope, path))?.fn?.version;

  beforeAll(async () => {
    await Promise.all(replicas.map((r) => r.changes.onApplicationBootstrap()));
  });

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.changes.onApplicationShutdown()));
    await Promise.all(replicas.map((r) => r.nats.onApplicationShutdown()));
  });

  it('reads an endpoint once per replica and keeps it until COMPUTE_ENDPOINT_CACHE_MS passes', async () => {
    store.at.set('lookups-a/hook', '1');
    const before = store.reads;
    expect(await version(0, a, 'hook')).toBe(1);
    expect(await version(0, a, 'hook')).toBe(1);
    expect(store.reads - before).toBe(1);
    store.at.set('lookups-a/hook', '2');
    expect(await version(0, a, 'hook')).toBe(1);
    clock.advance(2001);
    expect(await version(0, a, 'hook')).toBe(2);
  });

  it('does not keep a path with no endpoint: one created answers from its first call', async () => {
    expect(await version(0, a, 'later')).toBeUndefined();
    store.at.set('lookups-a/later', '1');
    expect(await version(0, a, 'later')).toBe(1);
  });

  it('a change on one replica drops the workspace’s endpoints on both, and only that workspace’s', async () => {
    store.at.set('lookups-a/x', '1');
    store.at.set('lookups-b/x', '1');
    for (const replica of [0, 1]) {
      expect(await version(replica, a, 'x')).toBe(1);
      expect(await version(replica, b, 'x')).toBe(1);
    }
    store.at.set('lookups-a/x', '2');
    store.at.set('lookups-b/x', '2');
    replicas[0]!.changes.changed(a);
    // This replica forgets at once; the other when the notice arrives.
    expect(await version(0, a, 'x')).toBe(2);
    await eventually(async () => ((await version(1, a, 'x')) === 2 ? true : undefined), 10_000, 10);
    // Workspace b was not told: both replicas still answer what they kept.
    expect(await version(0, b, 'x')).toBe(1);
    expect(await version(1, b, 'x')).toBe(1);
  });
});
