import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Transactions, issueWorkspaceScope } from '@strata/db';
import { finishRun, pendingRun } from '../src/runs/run-progress.js';
import { cancelledBy, type RunRow } from '../src/runs/run-rows.js';
import type { RunEndings } from '../src/runs/run-endings.js';
import { RunsRepository } from '../src/runs/runs.repository.js';
import { openOrchestrationTestDatabase, type OrchestrationTestDatabase } from './support/orchestration-database.js';

/**
 * Runs counted as they end (strata_orchestration_runs_ended_total), against a
 * real PostgreSQL: once per ending, only after the commit, whatever writes the
 * engines make around it.
 */
describe('runs counted as they end', () => {
  let db: OrchestrationTestDatabase;
  let runs: RunsRepository;
  let transactions: Transactions;
  const counted: Pick<RunRow, 'status' | 'failure_reason' | 'trigger_type'>[] = [];
  const scope = issueWorkspaceScope('run-endings');
  const RETENTION_MS = 86_400_000;

  beforeAll(async () => {
    db = await openOrchestrationTestDatabase(2);
    const endings = { counted: (run) => counted.push(run) } as Pick<RunEndings, 'counted'> as RunEndings;
    runs = new RunsRepository(db.ds, endings);
    transactions = new Transactions(db.ds);
    await db.ds.query(
      `INSERT INTO orchestration.orchestrations (id, workspace_slug, slug, name, status, version, trigger, steps,
                                                 created_by, updated_by, created_at, updated_at)
       VALUES ('orch_ends', $1, 'ends', 'ends', 'active', 1, '{"type":"on-demand"}', '[]', 'test', 'test', now(), now())`,
      [scope.workspace],
    );
  });

  afterAll(async () => {
    await db?.close();
  });

  async function started(id: string): Promise<RunRow> {
    const start = { input: {}, correlationId: null, triggerType: 'manual', triggerMetadata: {} };
    const run = { ...pendingRun(scope, { id: 'orch_ends', version: 1 }, start, new Date()), id };
    expect(await runs.insert(scope, run)).toBe(true);
    return run;
  }

  it('counts a run once when it ends, though it is written again in the same transaction', async () => {
    counted.length = 0;
    const run = await started('orun_completes');
    await transactions.run(async (tx) => {
      await runs.save(scope, tx, { ...run, status: 'running' });
      finishRun(run, { kind: 'go', nextStepId: null }, new Date(), RETENTION_MS);
      await runs.save(scope, tx, run);
      // Not counted before the commit.
      expect(counted).toEqual([]);
      await runs.save(scope, tx, { ...run, due_at: null }); // a later write of the ended run (the engine's retry path)
    });
    expect(counted).toEqual([{ status: 'completed', failure_reason: null, trigger_type: 'manual' }]);
  });

  it('never counts an ending that rolled back, and counts a run ended again after a retry', async () => {
    counted.length = 0;
    const run = await started('orun_retried');
    await expect(
      transactions.run(async (tx) => {
        await runs.save(scope, tx, { ...run, status: 'failed', failure_reason: 'boom', completed_at: new Date() });
        throw new Error('the transaction fails after the write');
      }),
    ).rejects.toThrow('the transaction fails');
    expect(counted).toEqual([]);

    await transactions.run((tx) =>
      runs.save(scope, tx, { ...run, status: 'failed', failure_reason: 'Step a failed', completed_at: new Date() }),
    );
    await transactions.run((tx) => runs.save(scope, tx, { ...run, status: 'running', completed_at: null }));
    await transactions.run((tx) =>
      runs.save(scope, tx, { ...run, status: 'failed', failure_reason: cancelledBy('u1'), completed_at: new Date() }),
    );
    expect(counted.map((r) => r.failure_reason)).toEqual(['Step a failed', cancelledBy('u1')]);
  });
});
