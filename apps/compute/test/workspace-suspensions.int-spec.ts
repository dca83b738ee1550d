import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Kvm } from '@nats-io/kv';
import { NatsConnectionHolder } from '@strata/platform';
import { eventually, ManualClock } from '@strata/testing';
import { liftSuspension, listSuspensions } from '../src/suspensions/suspensions-command.js';
import { suspensionsBucket, WorkspaceSuspensions } from '../src/suspensions/workspace-suspensions.js';
import { computeTestConfig } from './support/compute-config.js';

/**
 * Lost isolates counted per workspace and the suspensions they start, shared
 * between compute processes through JetStream's key-value store: two
 * instances stand for two processes (a worker that lost an isolate, and the
 * API or another worker). Real NATS, manual clocks.
 */
describe('workspace suspensions', () => {
  const config = computeTestConfig({
    COMPUTE_SUSPEND_AFTER_LOST_ISOLATES: '2',
    COMPUTE_LOST_ISOLATE_WINDOW_MS: '600000',
    COMPUTE_SUSPEND_MS: '300000',
  });
  const start = Date.parse('2026-11-26T12:00:00.000Z');
  const workerClock = new ManualClock(start);
  const apiClock = new ManualClock(start);
  const workerNats = new NatsConnectionHolder(config);
  const apiNats = new NatsConnectionHolder(config);
  const worker = new WorkspaceSuspensions(workerNats, config, workerClock);
  const api = new WorkspaceSuspensions(apiNats, config, apiClock);

  beforeAll(async () => {
    await worker.onModuleInit();
    await api.onModuleInit();
  });

  afterAll(async () => {
    for (const s of [worker, api]) {
      await s.beforeApplicationShutdown();
      s.onApplicationShutdown();
    }
    await (await bucket()).destroy();
    await workerNats.onApplicationShutdown();
    await apiNats.onApplicationShutdown();
  });

  /** Writes the losses the way a stopping worker does: recorded, then waited for before it ends. */
  const lose = async (instance: WorkspaceSuspensions, workspace: string, times = 1, code = 'c'.repeat(64)) => {
    for (let i = 0; i < times; i++) instance.recordLoss(workspace, code);
    await instance.settled();
  };
  const bucket = async () => new Kvm(await apiNats.get()).open(suspensionsBucket(config.NATS_PREFIX));

  it('suspends a workspace at its second loss within the window, in every process', async () => {
    await lose(worker, 'ws-twice');
    expect(worker.suspendedUntil('ws-twice')).toBeUndefined();
    workerClock.advance(60_000);
    apiClock.advance(60_000);
    await lose(worker, 'ws-twice');
    const until = new Date(start + 60_000 + 300_000);
    expect(worker.suspendedUntil('ws-twice')).toEqual(until);
    // The other process hears of it from the bucket, without asking per run.
    expect(await eventually(async () => api.suspendedUntil('ws-twice'), 10_000)).toEqual(until);
    // Other workspaces are not touched: one loss of another is below the threshold, and refuses
    // only the code that lost it.
    await lose(worker, 'ws-other', 1, 'b'.repeat(64));
    expect(worker.suspendedUntil('ws-other')).toBeUndefined();
    expect(await eventually(async () => api.refusal('ws-other', 'b'.repeat(64)), 10_000)).toEqual({
      until: new Date(start + 60_000 + 300_000),
      message: expect.stringContaining('This code (functionCodeHash bbbbbbbbbbbb…) made the sandbox lose an isolate'),
    });
    expect(api.refusal('ws-other', 'a'.repeat(64))).toBeUndefined();
    expect(api.workspaceRefusal('ws-other')).toBeUndefined();
    // A suspended workspace refuses every code, with the workspace's message.
    expect(api.refusal('ws-twice', 'a'.repeat(64))).toEqual({
      until,
      message: expect.stringContaining('Function runs of this workspace are suspended until'),
    });
  });

  it('lifts the suspension when it ends', () => {
    apiClock.advance(299_999);
    expect(api.suspendedUntil('ws-twice')).toBeDefined();
    apiClock.advance(1);
    expect(api.suspendedUntil('ws-twice')).toBeUndefined();
  });

  it('counts every loss recorded by two processes at once (compare-and-set on the record)', async () => {
    workerClock.advance(start + 3_600_000 - workerClock.now().getTime());
    apiClock.advance(start + 3_600_000 - apiClock.now().getTime());
    // Ten writes of one record at once: most find it changed and read it again.
    await Promise.all([lose(worker, 'ws-race', 5), lose(api, 'ws-race', 5)]);
    const stored = JSON.parse((await (await bucket()).get('ws-race'))!.string()) as { losses: string[] };
    expect(stored.losses).toHaveLength(10);
    const until = new Date(start + 3_600_000 + 300_000);
    expect(await eventually(async () => worker.suspendedUntil('ws-race'), 10_000)).toEqual(until);
    expect(await eventually(async () => api.suspendedUntil('ws-race'), 10_000)).toEqual(until);
  });

  it("lists the records, and lifts one with the operator's command (docs/runbooks.md), in every process", async () => {
    await lose(worker, 'ws-lifted', 2);
    expect(await eventually(async () => api.suspendedUntil('ws-lifted'), 10_000)).toBeDefined();
    const listed = await listSuspensions(await apiNats.get(), config.NATS_PREFIX);
    expect(listed.map((e) => e.workspace)).toEqual(expect.arrayContaining(['ws-lifted', 'ws-other', 'ws-twice']));
    expect(listed.find((e) => e.workspace === 'ws-lifted')).toMatchObject({
      losses: [expect.any(String), expect.any(String)],
      suspendedUntil: expect.any(String),
      codes: { ['c'.repeat(64)]: expect.any(String) },
    });
    expect(await liftSuspension(await apiNats.get(), config.NATS_PREFIX, 'ws-lifted')).toBe(true);
    expect(await liftSuspension(await apiNats.get(), config.NATS_PREFIX, 'ws-lifted')).toBe(false);
    expect(await liftSuspension(await apiNats.get(), config.NATS_PREFIX, 'ws-never')).toBe(false);
    await eventually(async () => (api.suspendedUntil('ws-lifted') ? undefined : true), 10_000);
    await eventually(async () => (worker.suspendedUntil('ws-lifted') ? undefined : true), 10_000);
  });

  it('knows the suspensions written before it started', async () => {
    const late = new WorkspaceSuspensions(apiNats, config, new ManualClock(start + 3_600_000));
    await late.onModuleInit();
    try {
      expect(late.suspendedUntil('ws-race')).toEqual(new Date(start + 3_600_000 + 300_000));
      expect(late.suspendedUntil('ws-twice')).toBeUndefined(); // ended an hour ago
    } finally {
      late.onApplicationShutdown();
    }
  });
});
