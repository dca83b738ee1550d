import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { issueWorkspaceScope } from '@strata/db';
import type { RunOutcome } from '../src/runs/runs.repository.js';
import { RunsRepository } from '../src/runs/runs.repository.js';
import { RunOutcomesRepository } from '../src/runs/run-outcomes.repository.js';
import { openComputeTestDatabase, type ComputeTestDatabase } from './support/compute-database.js';
import { eventRun } from './support/new-run.js';

/**
 * The worker's batched outcome statement (`RunOutcomesRepository.finishAll`)
 * against a real PostgreSQL: in one statement, each run is written under its
 * own run's conditions, exactly as its single-run statement would, and the
 * answer says run by run which were.
 */
describe('outcomes of many runs written in one statement', () => {
  let db: ComputeTestDatabase;
  let ds: DataSource;
  let runs: RunsRepository;
  let outcomes: RunOutcomesRepository;
  const scope = issueWorkspaceScope('batched-outcomes-a');
  const other = issueWorkspaceScope('batched-outcomes-b');
  const takenAt = new Date('2026-11-29T10:00:00.000Z');
  const claimedAt = new Date('2026-11-29T10:00:00.050Z');
  const lease = new Date('2026-11-29T10:00:30.000Z');
  const outcome: RunOutcome = {
    status: 'succeeded',
    logs: '[{"level":"log","message":"hi"}]',
    logsTruncated: false,
    apiCalls: '[]',
    returnValue: '{"success":true,"data":1}',
    error: null,
    memoryUsageBytes: 1024,
    cpuUsageSeconds: 0.0004,
    finishedAt: new Date('2026-11-29T10:00:00.104Z'),
  };

  beforeAll(async () => {
    db = await openComputeTestDatabase(scope.workspace, 2);
    ds = db.ds;
    runs = new RunsRepository(ds);
    outcomes = new RunOutcomesRepository(ds);
  });

  afterAll(async () => {
    await db?.close();
  });

  async function queued(): Promise<string> {
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
      {
        status: string;
        worker_id: string | null;
        started_at: Date | null;
        lease_expires_at: Date | null;
        logs: string;
        return_value: string | null;
        error: string | null;
        finished_at: Date | null;
      }[]
    >(
      `SELECT status, worker_id, started_at, lease_expires_at, logs, return_value, error, finished_at
         FROM compute.runs WHERE id = $1`,
      [id],
    );
    return r!;
  }

  it('writes each run of a batch under its own conditions and answers run by run', async () => {
    const fresh = await queued(); // queued, executed before its claim: taken by the write
    const claimedHere = await queued(); // claimed by this execution: written, its claim time kept
    expect(await runs.take(scope, claimedHere, 'worker-1/a', claimedAt, lease)).toBe(true);
    const held = await queued(); // claimed at start by the worker (not queued): written while held
    expect(await runs.take(scope, held, 'worker-1', claimedAt, lease)).toBe(true);
    const takenByOther = await queued(); // another worker's claim: untouched
    expect(await runs.take(scope, takenByOther, 'worker-2', claimedAt, lease)).toBe(true);
    const cancelled = await queued(); // cancelled meanwhile: untouched
    await ds.query(`UPDATE compute.runs SET status = 'cancelled' WHERE id = $1`, [cancelled]);
    const heldNotQueued = await queued(); // a held write of a run still queued: refused (it was never claimed)
    const failed = { ...outcome, status: 'failed' as const, returnValue: null, error: '{"name":"Error"}' };

    const answers = await outcomes.finishAll(scope, [
      { id: fresh, holder: 'worker-1/b', queued: { startedAt: takenAt }, outcome },
      { id: claimedHere, holder: 'worker-1/a', queued: { startedAt: takenAt }, outcome: failed },
      { id: held, holder: 'worker-1', outcome },
      { id: takenByOther, holder: 'worker-1/c', queued: { startedAt: takenAt }, outcome },
      { id: cancelled, holder: 'worker-1/d', queued: { startedAt: takenAt }, outcome },
      { id: heldNotQueued, holder: 'worker-1', outcome },
    ]);
    expect(answers).toEqual([true, true, true, false, false, false]);

    expect(await row(fresh)).toMatchObject({
      status: 'succeeded',
      worker_id: 'worker-1/b',
      started_at: takenAt,
      lease_expires_at: null,
      logs: outcome.logs,
      return_value: outcome.returnValue,
      finished_at: outcome.finishedAt,
    });
    expect(await row(claimedHere)).toMatchObject({
      status: 'failed',
      worker_id: 'worker-1/a',
      started_at: claimedAt,
      lease_expires_at: null,
      return_value: null,
      error: '{"name":"Error"}',
    });
    expect(await row(held)).toMatchObject({ status: 'succeeded', worker_id: 'worker-1', started_at: claimedAt });
    expect(await row(takenByOther)).toMatchObject({
      status: 'running',
      worker_id: 'worker-2',
      lease_expires_at: lease,
    });
    expect((await row(cancelled)).status).toBe('cancelled');
    expect(await row(heldNotQueued)).toMatchObject({ status: 'queued', worker_id: null });

    // Once final, a second batch takes none of them.
    expect(
      await outcomes.finishAll(scope, [
        { id: fresh, holder: 'worker-1/b', queued: { startedAt: takenAt }, outcome: failed },
        { id: held, holder: 'worker-1', outcome: failed },
      ]),
    ).toEqual([false, false]);
    expect((await row(fresh)).status).toBe('succeeded');
  });

  it("writes nothing of another workspace's runs, and answers in the order it was given", async () => {
    const mine = [await queued(), await queued(), await queued()];
    expect(
      await outcomes.finishAll(
        other,
        mine.map((id) => ({ id, holder: 'worker-1/x', queued: { startedAt: takenAt }, outcome })),
      ),
    ).toEqual([false, false, false]);
    for (const id of mine) expect((await row(id)).status).toBe('queued');

    // The statement sorts its rows by id; the answers follow the writes as given.
    const reversed = [...mine].sort().reverse();
    expect(
      await outcomes.finishAll(scope, [
        { id: reversed[0]!, holder: 'worker-1/x', queued: { startedAt: takenAt }, outcome },
        { id: reversed[1]!, holder: 'worker-1/y', outcome },
        { id: reversed[2]!, holder: 'worker-1/z', queued: { startedAt: takenAt }, outcome },
      ]),
    ).toEqual([true, false, true]);
  });
});
