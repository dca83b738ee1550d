import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { issueWorkspaceScope, type WorkspaceScope } from '@strata/db';
import { NatsConnectionHolder } from '@strata/platform';
import { eventually, ManualClock } from '@strata/testing';
import { TriggerLookups } from '../src/triggers/trigger-lookups.js';
import { TriggerChanges } from '../src/triggers/trigger-changes.js';
import type { TriggerEntity } from '../src/triggers/trigger.entity.js';
import type { TriggersRepository } from '../src/triggers/triggers.repository.js';
import { computeTestConfig } from './support/compute-config.js';

/** The endpoints of a fake store: what each replica reads, and how often. */
class Endpoints {
  reads = 0;
  readonly at = new Map<string, string>();

  repository(): TriggersRepository {
    return {
      watchingWithFunctions: async (scope: WorkspaceScope, event: string, recordSlug: string) => {
        this.reads++;
        const version = this.at.get(`${scope.workspace}/${event}/${recordSlug}`);
        if (version === undefined) return [];
        const trigger = {
          id: `${scope.workspace}-${event}`,
          metadata: { event, recordSlug },
        } as unknown as TriggerEntity;
        return [{ trigger, fn: { id: 'fn', version: Number(version), codeHash: version } }];
      },
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

describe('TriggerLookups on two replicas, over a real NATS server', () => {
  const config = computeTestConfig({
    COMPUTE_TRIGGER_CACHE_MS: '2000',
  });
  const clock = new ManualClock();
  const store = new Endpoints();
  const replicas = [0, 1].map(() => {
    const nats = new NatsConnectionHolder(config);
    const changes = new TriggerChanges(nats, config);
    return { nats, changes, lookups: new TriggerLookups(store.repository(), clock, config, changes) };
  });
  const a = issueWorkspaceScope('lookups-a');
  const b = issueWorkspaceScope('lookups-b');
  const version = async (replica: number, scope: WorkspaceScope, path: string) =>
    (await replicas[replica]!.lookups.endpointAt(scope, path))?.fn?.version;

  beforeAll(async () => {
    await Promise.all(replicas.map((r) => r.changes.onApplicationBootstrap()));
  });

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.changes.onApplicationShutdown()));
    await Promise.all(replicas.map((r) => r.nats.onApplicationShutdown()));
  });

  it('reads an endpoint once per replica and keeps it until COMPUTE_TRIGGER_CACHE_MS passes', async () => {
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

  it('keeps the triggers watching an event, none included, until the workspace’s triggers change', async () => {
    const watching = async (replica: number) =>
      (await replicas[replica]!.lookups.watching(a, 'record_created', 'orders')).map((w) => w.fn?.version);
    const before = store.reads;
    expect(await watching(0)).toEqual([]);
    expect(await watching(0)).toEqual([]);
    expect(store.reads - before).toBe(1);
    expect(await watching(1)).toEqual([]);
    // A trigger is created: the replica that created it says so, and both see it at once.
    store.at.set('lookups-a/record_created/orders', '1');
    expect(await watching(1)).toEqual([]);
    await replicas[0]!.changes.changed(a);
    expect(await watching(0)).toEqual([1]);
    await eventually(async () => ((await watching(1)).length === 1 ? true : undefined), 10_000, 10);
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
    await replicas[0]!.changes.changed(a);
    // This replica forgets at once; the other when the notice arrives.
    expect(await version(0, a, 'x')).toBe(2);
    await eventually(async () => ((await version(1, a, 'x')) === 2 ? true : undefined), 10_000, 10);
    // Workspace b was not told: both replicas still answer what they kept.
    expect(await version(0, b, 'x')).toBe(1);
    expect(await version(1, b, 'x')).toBe(1);
  });
});
