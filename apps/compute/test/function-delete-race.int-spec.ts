import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { issueWorkspaceScope, Transactions, type Tx } from '@strata/db';
import { lockWaiter } from '@strata/testing';
import { FunctionsRepository } from '../src/functions/functions.repository.js';
import { RunsRepository } from '../src/runs/runs.repository.js';
import { openComputeTestDatabase, type ComputeTestDatabase } from './support/compute-database.js';
import { eventRun } from './support/new-run.js';

/**
 * A run of a function written while the function is deleted, against a real
 * PostgreSQL: the delete cancels the function's queued runs in its transaction,
 * so a run must be written before the delete looks for them, or be written
 * cancelled. Before 2026-11-26 executes and re-runs racing a delete were
 * written after its cancellation and ran the deleted function.
 */
describe('a run written while its function is deleted', () => {
  let db: ComputeTestDatabase;
  let ds: DataSource;
  let runs: RunsRepository;
  let functions: FunctionsRepository;
  const scope = issueWorkspaceScope('function-delete-a');
  const now = new Date('2026-11-26T10:00:00Z');

  beforeAll(async () => {
    db = await openComputeTestDatabase(scope.workspace, 4);
    ds = db.ds;
    runs = new RunsRepository(ds);
    functions = new FunctionsRepository(ds);
  });

  afterAll(async () => {
    await db?.close();
  });

  async function liveFunction(): Promise<string> {
    const id = randomUUID();
    await ds.query(
      `INSERT INTO compute.functions (id, workspace_slug, name, code, version, code_hash, created_by, updated_by)
       VALUES ($1, $2, $3, 'async function run() {}', 1, $4, 'test', 'test')`,
      [id, scope.workspace, `fn-${id}`, 'a'.repeat(64)],
    );
    return id;
  }

  async function statusOf(runId: string): Promise<{ status: string; error: string | null }> {
    const [row] = await ds.query<{ status: string; error: string | null }[]>(
      'SELECT status, error FROM compute.runs WHERE id = $1',
      [runId],
    );
    return row!;
  }

  /** The delete as the service runs it: the function soft-deleted, then its queued runs cancelled. */
  async function deleteIn(tx: Tx, functionId: string): Promise<void> {
    expect(await functions.softDelete(scope, tx, functionId, 'test', now)).toBe(true);
    await runs.cancelQueuedOfFunction(scope, tx, functionId, 'The function was deleted.', now);
  }

  const pending = (promise: Promise<unknown>) => {
    const state = { settled: false };
    void promise.finally(() => (state.settled = true));
    return state;
  };
  const CANCELLED = { status: 'cancelled', error: '{"name":"Cancelled","message":"The function was deleted."}' };

  it('is written cancelled, never queued, once its function is deleted', async () => {
    const functionId = await liveFunction();
    await new Transactions(ds).run((tx) => deleteIn(tx, functionId));
    const run = eventRun({ functionId, triggerId: null, executionSource: 'manual' });
    await runs.insert(scope, undefined, run);
    expect(await statusOf(run.id)).toEqual(CANCELLED);
  });

  it('waits for a delete in progress, and is then written cancelled', async () => {
    const functionId = await liveFunction();
    const deleting = ds.createQueryRunner();
    await deleting.connect();
    try {
      await deleting.startTransaction();
      await deleteIn(deleting.manager as unknown as Tx, functionId);
      const run = eventRun({ functionId, triggerId: null, executionSource: 'manual' });
      const written = runs.insert(scope, undefined, run);
      const state = pending(written);
      await lockWaiter(ds);
      expect(state.settled).toBe(false);
      await deleting.commitTransaction();
      await written;
      expect(await statusOf(run.id)).toEqual(CANCELLED);
    } finally {
      await deleting.release();
    }
  });

  it('makes a delete wait for a run being written, and the delete then cancels it', async () => {
    const functionId = await liveFunction();
    const writing = ds.createQueryRunner();
    await writing.connect();
    const run = eventRun({ functionId, triggerId: null, executionSource: 'manual' });
    try {
      await writing.startTransaction();
      await runs.insert(scope, writing.manager as unknown as Tx, run);
      const deleted = new Transactions(ds).run((tx) => deleteIn(tx, functionId));
      const state = pending(deleted);
      await lockWaiter(ds);
      expect(state.settled).toBe(false);
      await writing.commitTransaction();
      await deleted;
    } finally {
      await writing.release();
    }
    expect(await statusOf(run.id)).toEqual(CANCELLED);
  });

  it('is written queued while its function is live', async () => {
    const functionId = await liveFunction();
    const run = eventRun({ functionId, triggerId: null, executionSource: 'manual' });
    await runs.insert(scope, undefined, run);
    expect(await statusOf(run.id)).toEqual({ status: 'queued', error: null });
  });
});
