import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { issueWorkspaceScope } from '@strata/db';
import { lockWaiter } from '@strata/testing';
import { pendingRun } from '../src/runs/run-progress.js';
import type { RunRow } from '../src/runs/run-rows.js';
import { RunEndings } from '../src/runs/run-endings.js';
import { RunsRepository } from '../src/runs/runs.repository.js';
import { openOrchestrationTestDatabase, type OrchestrationTestDatabase } from './support/orchestration-database.js';

/**
 * A run written while its orchestration is being deleted, against a real
 * PostgreSQL: the delete's cancellation lists the open runs after the delete,
 * so a run must be written either before the delete commits (and be listed) or
 * not at all. Before 2026-11-26 one written in between escaped the
 * cancellation and ran on.
 */
describe('a new orchestration run and its orchestration being deleted', () => {
  let db: OrchestrationTestDatabase;
  let ds: DataSource;
  let runs: RunsRepository;
  const scope = issueWorkspaceScope('run-insert-a');

  beforeAll(async () => {
    db = await openOrchestrationTestDatabase(3);
    ds = db.ds;
    runs = new RunsRepository(ds, new RunEndings());
  });

  afterAll(async () => {
    await db?.close();
  });

  async function orchestration(id: string): Promise<void> {
    await ds.query(
      `INSERT INTO orchestration.orchestrations (id, workspace_slug, slug, name, status, version, trigger, steps,
                                                 created_by, updated_by, created_at, updated_at)
       VALUES ($1, $2, $1, $1, 'active', 1, '{"type":"on-demand"}', '[]', 'test', 'test', now(), now())`,
      [id, scope.workspace],
    );
  }

  function run(id: string, orchestrationId: string): RunRow {
    const start = { input: {}, correlationId: null, triggerType: 'manual', triggerMetadata: {} };
    return { ...pendingRun(scope, { id: orchestrationId, version: 1 }, start, new Date()), id };
  }

  async function exists(runId: string): Promise<boolean> {
    return (await ds.query('SELECT 1 FROM orchestration.runs WHERE id = $1', [runId])).length > 0;
  }

  it('is not written once the delete has taken the orchestration, even before the delete commits', async () => {
    await orchestration('orch_deleting');
    const deleting = ds.createQueryRunner();
    await deleting.connect();
    try {
      await deleting.query('BEGIN');
      await deleting.query('DELETE FROM orchestration.orchestrations WHERE id = $1', ['orch_deleting']);
      // The run's write waits for the delete: it must not slip in before the delete's cancellation looks.
      const written = runs.insert(scope, run('orun_while_deleting', 'orch_deleting'));
      let settled = false;
      void written.finally(() => (settled = true));
      await lockWaiter(ds);
      expect(settled).toBe(false);
      await deleting.query('COMMIT');
      expect(await written).toBe(false);
      expect(await exists('orun_while_deleting')).toBe(false);
    } finally {
      await deleting.release();
    }
  });

  it('makes a delete wait for a run written before it, which the cancellation then sees', async () => {
    await orchestration('orch_starting');
    const starting = ds.createQueryRunner();
    await starting.connect();
    try {
      await starting.query('BEGIN');
      // The run's write, in a transaction still open (an event's claim, say).
      await starting.query(
        `SELECT 1 FROM orchestration.orchestrations WHERE workspace_slug = $1 AND id = $2 FOR SHARE`,
        [scope.workspace, 'orch_starting'],
      );
      const deleted = ds.query('DELETE FROM orchestration.orchestrations WHERE id = $1', ['orch_starting']);
      let settled = false;
      void deleted.finally(() => (settled = true));
      await lockWaiter(ds);
      expect(settled).toBe(false);
      await starting.query('COMMIT');
      await deleted;
    } finally {
      await starting.release();
    }
    expect(await runs.insert(scope, run('orun_after_delete', 'orch_starting'))).toBe(false);
  });

  it('is written while the orchestration exists', async () => {
    await orchestration('orch_live');
    expect(await runs.insert(scope, run('orun_live', 'orch_live'))).toBe(true);
    expect(await exists('orun_live')).toBe(true);
  });
});
