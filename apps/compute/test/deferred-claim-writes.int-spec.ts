import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { issueWorkspaceScope } from '@strata/db';
import type { RunOutcome } from '../src/runs/runs.repository.js';
import { RunsRepository } from '../src/runs/runs.repository.js';
import { openComputeTestDatabase, type ComputeTestDatabase } from './support/compute-database.js';
import { eventRun } from './support/new-run.js';

/**
 * The statements of a run a worker executes before claiming it (`DeferredClaim`),
 * against a real PostgreSQL: the claim (`take`) and the outcome written with the
 * claim (`finishQueued`), each only while the run is still the worker's to take.
 */
describe('writes of a run executed before its claim', () => {
  let db: ComputeTestDatabase;
  let ds: DataSource;
  let runs: RunsRepository;
  const scope = issueWorkspaceScope('deferred-claim-a');
  const other = issueWorkspaceScope('deferred-claim-b');
  const takenAt = new Date('2026-11-26T10:00:00.000Z');
  const lease = new Date('2026-11-26T10:00:30.000Z');
  const outcome: RunOutcome = {
    status: 'succeeded',
    logs: '[]',
    logsTruncated: false,
    apiCalls: '[]',
    returnValue: '{"success":true,"data":1}',
    error: null,
    memoryUsageBytes: 1024,
    cpuUsageSeconds: 0.0004,
    finishedAt: new Date('2026-11-26T10:00:00.004Z'),
  };

  beforeAll(async () => {
    db = await openComputeTestDatabase(scope.workspace, 2);
    ds = db.ds;
    runs = new RunsRepository(ds);
  });

  afterAll(async () => {
    await db?.close();
  });

  async function queued(): Promise<string> {
    // A test run: its own code, no function.
    const run = eventRun({
      functionId: null,
      functionVersion: null,
      code: 'async function run() { return { success: true, data: 1 }; }',
      triggerId: null,
      executionSource: 'manual',
    });
    await runs.insert(scope, undefined, run);
    return run.id;
  }

  async function row(id: string) {
    const [r] = await ds.query<
      { status: string; worker_id: string | null; started_at: Date | null; lease_expires_at: Date | null }[]
    >('SELECT status, worker_id, started_at, lease_expires_at, return_value FROM compute.runs WHERE id = $1', [id]);
    return r!;
  }

  it('writes a queued run straight to its outcome, with the worker and the time it took the job', async () => {
    const id = await queued();
    expect(await runs.finishQueued(scope, id, 'worker-1', takenAt, outcome)).toBe(true);
    expect(await row(id)).toMatchObject({
      status: 'succeeded',
      worker_id: 'worker-1',
      started_at: takenAt,
      lease_expires_at: null,
      return_value: '{"success":true,"data":1}',
    });
    // Once final, neither a second outcome nor a claim takes it.
    expect(await runs.finishQueued(scope, id, 'worker-1', takenAt, { ...outcome, status: 'failed' })).toBe(false);
    expect(await runs.take(scope, id, 'worker-2', takenAt, lease)).toBe(false);
    expect((await row(id)).status).toBe('succeeded');
  });

  it('writes the outcome of a run this worker claimed (its claim answered or not), keeping the claim time', async () => {
    const id = await queued();
    const claimedAt = new Date('2026-11-26T10:00:00.050Z');
    expect(await runs.take(scope, id, 'worker-1', claimedAt, lease)).toBe(true);
    expect(await row(id)).toMatchObject({ status: 'running', worker_id: 'worker-1', lease_expires_at: lease });
    expect(await runs.finishQueued(scope, id, 'worker-1', takenAt, outcome)).toBe(true);
    expect(await row(id)).toMatchObject({ status: 'succeeded', started_at: claimedAt, lease_expires_at: null });
  });

  it('writes nothing for a run another worker claimed, one cancelled, or one of another workspace', async () => {
    const taken = await queued();
    expect(await runs.take(scope, taken, 'worker-2', takenAt, lease)).toBe(true);
    expect(await runs.finishQueued(scope, taken, 'worker-1', takenAt, outcome)).toBe(false);
    expect(await row(taken)).toMatchObject({ status: 'running', worker_id: 'worker-2' });

    const cancelled = await queued();
    await ds.query(`UPDATE compute.runs SET status = 'cancelled' WHERE id = $1`, [cancelled]);
    expect(await runs.take(scope, cancelled, 'worker-1', takenAt, lease)).toBe(false);
    expect(await runs.finishQueued(scope, cancelled, 'worker-1', takenAt, outcome)).toBe(false);
    expect((await row(cancelled)).status).toBe('cancelled');

    const mine = await queued();
    expect(await runs.take(other, mine, 'worker-1', takenAt, lease)).toBe(false);
    expect(await runs.finishQueued(other, mine, 'worker-1', takenAt, outcome)).toBe(false);
    expect((await row(mine)).status).toBe('queued');
  });
});
