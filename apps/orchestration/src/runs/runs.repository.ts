import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { afterCommit, managerOf, rowsOf, type Tx, type WorkspaceScope } from '@strata/db';
import type { Step } from '@strata/workflow';
import { RunEndings } from './run-endings.js';
import { hasEnded, type RunRow, type RunStatus, type StepRow } from './run-rows.js';

const RUN_COLUMNS = `id, workspace_slug, orchestration_id, orchestration_version, status, current_step_id,
  current_attempt, input, context, step_outputs, correlation_id, trigger_type, trigger_metadata, has_errors,
  delay_step_count, failure_reason, executed_steps, errors, due_at, created_at, started_at, completed_at,
  ttl_expires_at, workflow_id`;

const json = (v: unknown): string => JSON.stringify(v ?? null);

/** Orchestration versions whose steps a replica keeps in memory (oldest out first). */
const VERSIONS_KEPT = 1000;

/**
 * orchestration.runs and orchestration.run_steps. Tenant methods carry the
 * workspace in every statement; `claimDue` is the engine's system-wide claim and
 * answers each run's workspace for the engine to act within.
 */
@Injectable()
export class RunsRepository {
  private readonly versions = new Map<string, Step[]>();

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly endings: RunEndings,
  ) {}

  /**
   * Writes a new run while its orchestration exists; whether it did. The
   * orchestration's row is read FOR SHARE by the same statement: a delete
   * waits for the run's commit (and then cancels it with the others), or the
   * run finds the orchestration gone. Before 2026-11-26 a run created during a
   * delete escaped the delete's cancellation and ran on, out of the API's sight.
   */
  async insert(scope: WorkspaceScope, r: RunRow, tx?: Tx): Promise<boolean> {
    const written = rowsOf<{ id: string }>(
      await managerOf(this.db, tx).query(
        `INSERT INTO orchestration.runs (${RUN_COLUMNS})
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23,
                $24
          WHERE EXISTS (SELECT 1 FROM orchestration.orchestrations o WHERE o.workspace_slug = $2 AND o.id = $3 FOR SHARE)
         RETURNING id`,
        [
          r.id,
          scope.workspace,
          r.orchestration_id,
          r.orchestration_version,
          r.status,
          r.current_step_id,
          r.current_attempt,
          json(r.input),
          json(r.context),
          json(r.step_outputs),
          r.correlation_id,
          r.trigger_type,
          json(r.trigger_metadata),
          r.has_errors,
          r.delay_step_count,
          r.failure_reason,
          json(r.executed_steps),
          json(r.errors),
          r.due_at,
          r.created_at,
          r.started_at,
          r.completed_at,
          r.ttl_expires_at,
          r.workflow_id,
        ],
      ),
    );
    return written.length > 0;
  }

  /**
   * Records that `eventId` started `runId` of the orchestration, in `tx`; false when the
   * pair exists (a redelivery). A key with an end (`expiresAt`: a plain HMAC signature's
   * claim) is taken over once that end has passed (`now` at or after it), and is false
   * before.
   */
  async claimEvent(
    scope: WorkspaceScope,
    tx: Tx,
    eventId: string,
    orchestrationId: string,
    runId: string,
    now: Date,
    expiresAt: Date | null = null,
  ) {
    const onConflict =
      expiresAt === null
        ? 'DO NOTHING'
        : `DO UPDATE SET run_id = EXCLUDED.run_id, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
            WHERE e.expires_at <= EXCLUDED.created_at`;
    const rows = await managerOf(this.db, tx).query<{ run_id: string }[]>(
      `INSERT INTO orchestration.event_runs AS e (event_id, orchestration_id, workspace_slug, run_id, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (event_id, orchestration_id) ${onConflict} RETURNING run_id`,
      [eventId, orchestrationId, scope.workspace, runId, now, expiresAt],
    );
    return rows.length > 0;
  }

  /**
   * The run `eventId` started of the orchestration, with its status; undefined when none
   * (or it expired: its run was deleted, or its claim's end is not after `now`).
   */
  async runOfEvent(
    scope: WorkspaceScope,
    eventId: string,
    orchestrationId: string,
    now: Date,
  ): Promise<{ id: string; status: RunStatus } | undefined> {
    const [row] = await this.db.query<{ id: string; status: RunStatus }[]>(
      `SELECT r.id, r.status FROM orchestration.event_runs e
         JOIN orchestration.runs r ON r.workspace_slug = e.workspace_slug AND r.id = e.run_id
        WHERE e.workspace_slug = $1 AND e.event_id = $2 AND e.orchestration_id = $3
          AND (e.expires_at IS NULL OR e.expires_at > $4)`,
      [scope.workspace, eventId, orchestrationId, now],
    );
    return row;
  }

  async find(scope: WorkspaceScope, orchestrationId: string, id: string, tx?: Tx): Promise<RunRow | undefined> {
    const [row] = await managerOf(this.db, tx).query<RunRow[]>(
      `SELECT ${RUN_COLUMNS} FROM orchestration.runs WHERE workspace_slug = $1 AND orchestration_id = $2 AND id = $3
       ${tx ? 'FOR UPDATE' : ''}`,
      [scope.workspace, orchestrationId, id],
    );
    return row;
  }

  /** The ids of the orchestration's runs that have not ended (pending, running or waiting). */
  async openIdsOf(scope: WorkspaceScope, orchestrationId: string): Promise<string[]> {
    const rows = rowsOf<{ id: string }>(
      await this.db.query(
        `SELECT id FROM orchestration.runs
          WHERE workspace_slug = $1 AND orchestration_id = $2 AND status IN ('pending', 'running', 'waiting')`,
        [scope.workspace, orchestrationId],
      ),
    );
    return rows.map((r) => r.id);
  }

  async list(
    scope: WorkspaceScope,
    orchestrationId: string,
    q: { page: number; pageSize: number; status?: RunStatus | undefined },
  ): Promise<{ rows: RunRow[]; total: number }> {
    const params = [scope.workspace, orchestrationId, q.status ?? null];
    const where = `workspace_slug = $1 AND orchestration_id = $2 AND ($3::text IS NULL OR status = $3)`;
    const rows = await this.db.query<RunRow[]>(
      `SELECT ${RUN_COLUMNS} FROM orchestration.runs WHERE ${where}
        ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5`,
      [...params, q.pageSize, (q.page - 1) * q.pageSize],
    );
    const [count] = await this.db.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM orchestration.runs WHERE ${where}`,
      params,
    );
    return { rows, total: count?.n ?? 0 };
  }

  steps(scope: WorkspaceScope, runId: string, tx?: Tx): Promise<StepRow[]> {
    return managerOf(this.db, tx).query<StepRow[]>(
      `SELECT * FROM orchestration.run_steps WHERE workspace_slug = $1 AND run_id = $2 ORDER BY seq`,
      [scope.workspace, runId],
    );
  }

  /** A run's steps still `running` or `waiting` (what the engine goes on from). */
  openSteps(scope: WorkspaceScope, runId: string, tx?: Tx): Promise<StepRow[]> {
    return managerOf(this.db, tx).query<StepRow[]>(
      `SELECT * FROM orchestration.run_steps
        WHERE workspace_slug = $1 AND run_id = $2 AND status IN ('running', 'waiting') ORDER BY seq`,
      [scope.workspace, runId],
    );
  }

  /**
   * The steps of the version a run executes. A version never changes once
   * written, so the engine's reads (one per step) are kept in memory.
   */
  async versionSteps(
    scope: WorkspaceScope,
    orchestrationId: string,
    version: number,
    tx?: Tx,
  ): Promise<Step[] | undefined> {
    const key = `${scope.workspace}/${orchestrationId}@${version}`;
    const cached = this.versions.get(key);
    if (cached) return cached;
    const [row] = await managerOf(this.db, tx).query<{ steps: Step[] }[]>(
      `SELECT steps FROM orchestration.orchestration_versions
        WHERE workspace_slug = $1 AND orchestration_id = $2 AND version = $3`,
      [scope.workspace, orchestrationId, version],
    );
    if (!row) return undefined;
    if (this.versions.size >= VERSIONS_KEPT) this.versions.delete(this.versions.keys().next().value!);
    this.versions.set(key, row.steps);
    return row.steps;
  }

  /** System-wide, for the engine: runs due now, locked FOR UPDATE SKIP LOCKED in `tx` (replicas share them). */
  claimDue(tx: Tx, now: Date, limit: number): Promise<RunRow[]> {
    return managerOf(this.db, tx).query<RunRow[]>(
      `SELECT ${RUN_COLUMNS} FROM orchestration.runs
        WHERE status IN ('pending', 'running', 'waiting') AND due_at <= $1
        ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [now, limit],
    );
  }

  /**
   * For the engine, on compute's notice that a step's function run ended: the
   * run, locked in `tx` when it is running, waiting for a claim that holds it
   * (such as the one that started the function run and has not committed yet).
   */
  async lockRunning(scope: WorkspaceScope, tx: Tx, runId: string): Promise<RunRow | undefined> {
    const [row] = await managerOf(this.db, tx).query<RunRow[]>(
      `SELECT ${RUN_COLUMNS} FROM orchestration.runs WHERE workspace_slug = $1 AND id = $2 AND status = 'running'
          FOR UPDATE`,
      [scope.workspace, runId],
    );
    return row;
  }

  /**
   * System-wide, for the metrics: the runs not ended, per status, and how many
   * of them were due before `overdueBefore` (read through the index of due runs).
   */
  async openCounts(overdueBefore: Date): Promise<{ status: OpenRunStatus; open: number; overdue: number }[]> {
    const rows = rowsOf<{ status: OpenRunStatus; open: string; overdue: string }>(
      await this.db.query(
        `SELECT status, count(*) AS open, count(*) FILTER (WHERE due_at < $1) AS overdue
           FROM orchestration.runs WHERE status IN ('pending', 'running', 'waiting') GROUP BY status`,
        [overdueBefore],
      ),
    );
    return rows.map((r) => ({ status: r.status, open: Number(r.open), overdue: Number(r.overdue) }));
  }

  /**
   * System-wide, for retention: deletes up to `limit` finished runs whose ttlExpiresAt passed
   * (steps with them), and the key of the webhook delivery that started each. A record
   * event's key stays: the stream may deliver that event again long after (another
   * orchestration's run of it failing), and it must not start this run again.
   */
  async deleteExpired(now: Date, limit: number): Promise<number> {
    const rows = rowsOf<{ id: string }>(
      await this.db.query(
        `WITH gone AS (
           DELETE FROM orchestration.runs WHERE id IN (
             SELECT id FROM orchestration.runs WHERE status IN ('completed', 'failed') AND ttl_expires_at < $1
              ORDER BY ttl_expires_at LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING id),
         started AS (DELETE FROM orchestration.event_runs e USING gone
                      WHERE e.run_id = gone.id AND e.event_id LIKE 'webhook:%')
         SELECT id FROM gone`,
        [now, limit],
      ),
    );
    return rows.length;
  }

  /**
   * System-wide, for retention: deletes up to `limit` keys of record events claimed before
   * `before` (a time past which the records stream can no longer deliver the event again).
   * A webhook delivery's key goes with its run instead (`deleteExpired`).
   */
  async deleteStaleEventKeys(before: Date, limit: number): Promise<number> {
    const rows = rowsOf<{ event_id: string }>(
      await this.db.query(
        `DELETE FROM orchestration.event_runs WHERE (event_id, orchestration_id) IN (
           SELECT event_id, orchestration_id FROM orchestration.event_runs
            WHERE event_id NOT LIKE 'webhook:%' AND expires_at IS NULL AND created_at < $1
            ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED) RETURNING event_id`,
        [before, limit],
      ),
    );
    return rows.length;
  }

  /**
   * System-wide, for retention: deletes up to `limit` keys whose end (`expires_at`: plain
   * HMAC signatures' claims) is not after `now`, oldest first; how many. Keys another
   * replica is deleting, or a request is taking over, are skipped; a key taken over since
   * it was read is not deleted (its lock re-reads it).
   */
  async deleteExpiredClaims(now: Date, limit: number): Promise<number> {
    const rows = rowsOf<{ event_id: string }>(
      await this.db.query(
        `DELETE FROM orchestration.event_runs e USING (
           SELECT event_id, orchestration_id FROM orchestration.event_runs
            WHERE expires_at IS NOT NULL AND expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED) d
          WHERE e.event_id = d.event_id AND e.orchestration_id = d.orchestration_id
          RETURNING e.event_id`,
        [now, limit],
      ),
    );
    return rows.length;
  }

  /**
   * Writes the run's state. A run this statement ends (its stored status was
   * pending, running or waiting) is counted by `RunEndings` once `tx` commits:
   * the status it had is read, locked, by the statement itself.
   */
  async save(scope: WorkspaceScope, tx: Tx, r: RunRow): Promise<void> {
    const [written] = rowsOf<{ previous: RunStatus }>(
      await managerOf(this.db, tx).query(
        `UPDATE orchestration.runs r SET status = $3, current_step_id = $4, current_attempt = $5, context = $6,
                step_outputs = $7, has_errors = $8, delay_step_count = $9, failure_reason = $10, executed_steps = $11,
                errors = $12, due_at = $13, started_at = $14, completed_at = $15, ttl_expires_at = $16,
                workflow_id = $17
           FROM (SELECT status FROM orchestration.runs WHERE workspace_slug = $1 AND id = $2 FOR UPDATE) AS before
          WHERE r.workspace_slug = $1 AND r.id = $2
          RETURNING before.status AS previous`,
        [
          scope.workspace,
          r.id,
          r.status,
          r.current_step_id,
          r.current_attempt,
          json(r.context),
          json(r.step_outputs),
          r.has_errors,
          r.delay_step_count,
          r.failure_reason,
          json(r.executed_steps),
          json(r.errors),
          r.due_at,
          r.started_at,
          r.completed_at,
          r.ttl_expires_at,
          r.workflow_id,
        ],
      ),
    );
    if (written && !hasEnded(written.previous) && hasEnded(r.status)) {
      const ended = { status: r.status, failure_reason: r.failure_reason, trigger_type: r.trigger_type };
      afterCommit(tx, () => this.endings.counted(ended));
    }
  }

  async insertStep(scope: WorkspaceScope, tx: Tx, s: StepRow): Promise<void> {
    await managerOf(this.db, tx).query(
      `INSERT INTO orchestration.run_steps (id, workspace_slug, run_id, step_id, step_type, attempt, status, input, output,
         decision_result, delay_config, error, function_id, function_run_id, execution_id, started_at, completed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
      [
        s.id,
        scope.workspace,
        s.run_id,
        s.step_id,
        s.step_type,
        s.attempt,
        s.status,
        json(s.input),
        json(s.output),
        json(s.decision_result),
        json(s.delay_config),
        json(s.error),
        s.function_id,
        s.function_run_id,
        s.execution_id,
        s.started_at,
        s.completed_at,
      ],
    );
  }

  /**
   * Records the function run compute started for an attempt whose row waits
   * for it (the embedded engine's second phase), and has the run look in on it
   * at `pollAt`; whether the row was still waiting (a notice of the run's end
   * may have been recorded first). Two statements, each on one row, so that it
   * never waits for a lock while holding another (the notice's claim locks the
   * run, then the row).
   */
  async recordStarted(
    scope: WorkspaceScope,
    runId: string,
    rowId: string,
    started: { readonly functionRunId: string; readonly jobId: string },
    pollAt: Date,
  ): Promise<boolean> {
    const rows = rowsOf<{ id: string }>(
      await this.db.query(
        `UPDATE orchestration.run_steps SET function_run_id = $4, execution_id = $5
          WHERE workspace_slug = $1 AND run_id = $2 AND id = $3 AND function_run_id IS NULL AND status = 'running'
          RETURNING id`,
        [scope.workspace, runId, rowId, started.functionRunId, started.jobId],
      ),
    );
    if (rows.length === 0) return false;
    await this.lookInAt(scope, runId, pollAt);
    return true;
  }

  /** Has a running run looked in on at `at`, unless it is due sooner already. */
  async lookInAt(scope: WorkspaceScope, runId: string, at: Date): Promise<void> {
    await this.db.query(
      `UPDATE orchestration.runs SET due_at = $3
        WHERE workspace_slug = $1 AND id = $2 AND status = 'running' AND due_at > $3`,
      [scope.workspace, runId, at],
    );
  }

  /** What a step row gains as it moves: its status and result, and a compute attempt's function run once known. */
  async saveStep(scope: WorkspaceScope, tx: Tx, s: StepRow): Promise<void> {
    await managerOf(this.db, tx).query(
      `UPDATE orchestration.run_steps SET status = $3, output = $4, error = $5, delay_config = $6, completed_at = $7,
              function_run_id = $8, execution_id = $9
        WHERE workspace_slug = $1 AND id = $2`,
      [
        scope.workspace,
        s.id,
        s.status,
        json(s.output),
        json(s.error),
        json(s.delay_config),
        s.completed_at,
        s.function_run_id,
        s.execution_id,
      ],
    );
  }
}

/** The statuses of a run that has not ended. */
export type OpenRunStatus = 'pending' | 'running' | 'waiting';
