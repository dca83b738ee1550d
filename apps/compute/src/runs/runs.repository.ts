import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';
import { columnValue, insertRows, managerOf, queryPrepared, rowsOf, type Tx, type WorkspaceScope } from '@strata/db';
import type { JsonObject } from '../json.js';
import { RunEntity } from './run.entity.js';
import type { ExecutionSource, RunStatus } from './run-status.js';

export interface NewRun {
  readonly id: string;
  readonly jobId: string;
  readonly functionId: string | null;
  readonly functionVersion: number | null;
  readonly functionCodeHash: string;
  readonly code: string | null;
  readonly triggerId: string | null;
  readonly executionSource: ExecutionSource;
  readonly sealedParams: string;
  readonly paramsKeyVersion: number;
  readonly executionContext: JsonObject;
  readonly limits: Record<string, number>;
  readonly createdBy: string;
  readonly queuedAt: Date;
  /** Set when the executions limit refused the run: it is recorded, final, and never started. */
  readonly refused?: { readonly error: string; readonly at: Date };
  /** Set on a re-run: the run it repeats, who asked and why. */
  readonly rerunOf?: { readonly runId: string; readonly by: string; readonly reason: string | null };
  /**
   * Set on a run written as already running (an endpoint run handed straight to
   * a worker, an event's run offered straight to a worker): from
   * `startedAt` (else when queued), held by `by` until a worker takes it over,
   * finishes it, or `until` passes.
   */
  readonly held?: { readonly by: string; readonly until: Date; readonly startedAt?: Date };
}

/** A run written as already running, held by `held.by` until `held.until`. */
export type HeldRun = NewRun & { readonly held: NonNullable<NewRun['held']> };

export interface RunFilters {
  readonly jobId?: string | undefined;
  /** Reads the return value and the logs too (the list of one job's runs answers them). */
  readonly withOutput?: boolean;
  readonly functionId?: string | undefined;
  readonly triggerId?: string | undefined;
  readonly status?: RunStatus | undefined;
  readonly since?: Date | undefined;
  readonly until?: Date | undefined;
  readonly page: number;
  readonly limit: number;
}

/** How a run ended, as the worker writes it. */
export interface RunOutcome {
  readonly status: Extract<RunStatus, 'succeeded' | 'failed' | 'timed_out'>;
  readonly logs: string;
  readonly logsTruncated: boolean;
  readonly apiCalls: string;
  readonly returnValue: string | null;
  readonly error: string | null;
  readonly memoryUsageBytes: number;
  readonly cpuUsageSeconds: number;
  readonly finishedAt: Date;
}

/** Batches of runs up to this many rows are written as prepared statements (one per size). */
const PREPARED_BATCH = 16;

/** The columns of a list row: what user code produced is left for the detail. */
const LIST_COLUMNS = [
  'r.id',
  'r.jobId',
  'r.workspaceSlug',
  'r.functionId',
  'r.functionVersion',
  'r.functionCodeHash',
  'r.triggerId',
  'r.executionSource',
  'r.status',
  'r.executionContext',
  'r.limits',
  'r.logsTruncated',
  'r.error',
  'r.memoryUsageBytes',
  'r.cpuUsageSeconds',
  'r.queuedAt',
  'r.startedAt',
  'r.finishedAt',
  'r.originalRunId',
  'r.isRerun',
  'r.rerunCount',
  'r.rerunBy',
  'r.rerunReason',
  'r.createdBy',
];

/**
 * compute.runs within one workspace. Every statement carries
 * `workspace_slug = scope.workspace`; the worker's statements also carry the
 * state they expect (a claim only takes a queued run, a finish only a run this
 * worker still holds), so a late or repeated message changes nothing.
 */
@Injectable()
export class RunsRepository {
  private runColumns: ColumnMetadata[] | undefined;

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(scope: WorkspaceScope, tx: Tx | undefined, r: NewRun): Promise<RunEntity> {
    const manager = managerOf(this.db, tx);
    const row = this.entityOf(scope, r);
    // One named prepared statement (the hot path of every execution): columns from the entity's mapping.
    const { sql, values } = insertRows('compute.runs', this.columns(), [row]);
    await queryPrepared(manager, sql, values);
    return row;
  }

  /**
   * Writes a run unless one has its id already (an endpoint run the worker
   * records as it starts it, and the API again when no answer came); whether
   * this call wrote it.
   */
  async insertIfAbsent(scope: WorkspaceScope, r: NewRun): Promise<boolean> {
    const { sql, values } = insertRows('compute.runs', this.columns(), [this.entityOf(scope, r)]);
    const written = await queryPrepared<{ id: string }>(
      this.db.manager,
      `${sql} ON CONFLICT (id) DO NOTHING RETURNING id`,
      values,
    );
    return written.length > 0;
  }

  /**
   * Many runs in one statement (a batch of arrivals), each written only when no
   * run has its job id yet: an arrival dispatched again (the sweep, a retry)
   * finds its run instead of starting a second one. Answers the runs written.
   */
  async insertNewJobs(scope: WorkspaceScope, runs: readonly NewRun[]): Promise<RunEntity[]> {
    if (runs.length === 0) return [];
    const rows = runs.map((r) => this.entityOf(scope, r));
    const { sql, values } = insertRows('compute.runs', this.columns(), rows);
    const statement = `${sql} ON CONFLICT (job_id) DO NOTHING RETURNING id`;
    // The usual batch sizes as named prepared statements, one text per size (at most PREPARED_BATCH of them).
    const written =
      rows.length <= PREPARED_BATCH
        ? await queryPrepared<{ id: string }>(this.db.manager, statement, values)
        : rowsOf<{ id: string }>(await this.db.query(statement, values));
    const ids = new Set(written.map((r) => r.id));
    return rows.filter((r) => ids.has(r.id));
  }

  /** The workspace's runs with these job ids (job id → run id). */
  async runsOfJobs(scope: WorkspaceScope, jobIds: readonly string[]): Promise<Map<string, string>> {
    if (jobIds.length === 0) return new Map();
    const rows = await queryPrepared<{ id: string; job_id: string }>(
      this.db.manager,
      'SELECT id, job_id FROM compute.runs WHERE workspace_slug = $1 AND job_id = ANY($2::uuid[])',
      [scope.workspace, jobIds],
    );
    return new Map(rows.map((r) => [r.job_id, r.id]));
  }

  /**
   * The run of one (event, trigger) pair, written only if the pair is new: the
   * pair (`compute.trigger_event_runs`) and the run in one prepared statement,
   * so a redelivered event writes neither. A held run (`r.held`) is written as
   * running: a worker's claim of a run offered to it straight from the event.
   * Undefined when the pair started its run before.
   */
  async insertForEvent(
    scope: WorkspaceScope,
    r: NewRun,
    pair: { readonly eventId: string; readonly triggerId: string; readonly at: Date },
  ): Promise<RunEntity | undefined> {
    const row = this.entityOf(scope, r);
    const columns = this.columns();
    const values = columns.map((c) => columnValue(c, c.getEntityValue(row)));
    const at = values.length;
    const written = await queryPrepared<{ id: string; status: string }>(
      this.db.manager,
      `WITH pair AS (
         INSERT INTO compute.trigger_event_runs (event_id, trigger_id, workspace_slug, run_id, created_at)
         VALUES ($${at + 1}, $${at + 2}, $${at + 3}, $${at + 4}, $${at + 5})
         ON CONFLICT (event_id, trigger_id) DO NOTHING RETURNING run_id)
       INSERT INTO compute.runs (${columns.map((c) => c.databaseName).join(', ')})
       SELECT ${columns.map((_, i) => `$${i + 1}`).join(', ')} WHERE EXISTS (SELECT 1 FROM pair)
       RETURNING id, status`,
      [...values, pair.eventId, pair.triggerId, scope.workspace, row.id, pair.at],
    );
    // Written `cancelled` when its function was deleted meanwhile (migration 1764950000000): not this worker's to run.
    return written[0]?.status === 'running' || written[0]?.status === 'queued' ? row : undefined;
  }

  /** The row `r` is written as (what a worker executes a run it records itself with). */
  entityOf(scope: WorkspaceScope, r: NewRun): RunEntity {
    return this.db.manager.create(RunEntity, {
      id: r.id,
      jobId: r.jobId,
      workspaceSlug: scope.workspace,
      functionId: r.functionId,
      functionVersion: r.functionVersion,
      functionCodeHash: r.functionCodeHash,
      code: r.code,
      triggerId: r.triggerId,
      executionSource: r.executionSource,
      status: r.refused ? 'rate_limited' : r.held ? 'running' : 'queued',
      params: r.sealedParams,
      paramsKeyVersion: r.paramsKeyVersion,
      executionContext: r.executionContext,
      limits: r.limits,
      workerId: r.held?.by ?? null,
      leaseExpiresAt: r.held?.until ?? null,
      logs: '[]',
      logsTruncated: false,
      apiCalls: '[]',
      returnValue: null,
      error: r.refused?.error ?? null,
      memoryUsageBytes: null,
      cpuUsageSeconds: null,
      queuedAt: r.queuedAt,
      startedAt: r.held ? (r.held.startedAt ?? r.queuedAt) : null,
      finishedAt: r.refused?.at ?? null,
      originalRunId: r.rerunOf?.runId ?? null,
      isRerun: r.rerunOf !== undefined,
      rerunCount: 0,
      rerunBy: r.rerunOf?.by ?? null,
      rerunReason: r.rerunOf?.reason ?? null,
      createdBy: r.createdBy,
    });
  }

  async find(scope: WorkspaceScope, id: string): Promise<RunEntity | undefined> {
    const row = await this.db
      .createQueryBuilder(RunEntity, 'r')
      .where('r.workspace_slug = :workspace AND r.id = :id', { workspace: scope.workspace, id })
      .getOne();
    return row ?? undefined;
  }

  /**
   * Whether a run with this id exists in a workspace other than the caller's
   * (its existence only: the spec's re-run answers "Run does not belong to this
   * workspace." for it). Nothing of that run is read.
   */
  async belongsElsewhere(scope: WorkspaceScope, id: string): Promise<boolean> {
    const rows = await queryPrepared<{ found: number }>(
      this.db.manager,
      'SELECT 1 AS found FROM compute.runs WHERE id = $2 AND workspace_slug <> $1 LIMIT 1',
      [scope.workspace, id],
    );
    return rows.length > 0;
  }

  /** The run of a job id in the workspace, if there is one. */
  async findByJobId(scope: WorkspaceScope, jobId: string): Promise<RunEntity | undefined> {
    const row = await this.db
      .createQueryBuilder(RunEntity, 'r')
      .where('r.workspace_slug = :workspace AND r.job_id = :jobId', { workspace: scope.workspace, jobId })
      .getOne();
    return row ?? undefined;
  }

  /** A page of runs, newest first, without parameters; without logs and return values unless `withOutput`. */
  async list(scope: WorkspaceScope, f: RunFilters): Promise<{ rows: RunEntity[]; total: number }> {
    const query = this.db
      .createQueryBuilder(RunEntity, 'r')
      .select(f.withOutput ? [...LIST_COLUMNS, 'r.returnValue', 'r.logs'] : LIST_COLUMNS)
      .where('r.workspace_slug = :workspace', { workspace: scope.workspace });
    if (f.jobId) query.andWhere('r.job_id = :jobId', { jobId: f.jobId });
    if (f.functionId) query.andWhere('r.function_id = :functionId', { functionId: f.functionId });
    if (f.triggerId) query.andWhere('r.trigger_id = :triggerId', { triggerId: f.triggerId });
    if (f.status) query.andWhere('r.status = :status', { status: f.status });
    if (f.since) query.andWhere('r.queued_at >= :since', { since: f.since });
    if (f.until) query.andWhere('r.queued_at < :until', { until: f.until });
    const [rows, total] = await query
      .orderBy('r.queued_at', 'DESC')
      .addOrderBy('r.id', 'DESC')
      .offset((f.page - 1) * f.limit)
      .limit(f.limit)
      .getManyAndCount();
    return { rows, total };
  }

  /** Counts one more re-run of a run, in the re-run's transaction. */
  async countRerun(scope: WorkspaceScope, tx: Tx, id: string): Promise<void> {
    await managerOf(this.db, tx).query(
      'UPDATE compute.runs SET rerun_count = rerun_count + 1 WHERE workspace_slug = $1 AND id = $2',
      [scope.workspace, id],
    );
  }

  /** The re-runs of a run, oldest first, without what user code produced. */
  reruns(scope: WorkspaceScope, originalRunId: string): Promise<RunEntity[]> {
    return this.db
      .createQueryBuilder(RunEntity, 'r')
      .select(LIST_COLUMNS)
      .where('r.workspace_slug = :workspace AND r.original_run_id = :originalRunId', {
        workspace: scope.workspace,
        originalRunId,
      })
      .orderBy('r.queued_at', 'ASC')
      .addOrderBy('r.id', 'ASC')
      .limit(1000)
      .getMany();
  }

  /**
   * How many runs the workspace queued after `since`, whatever became of them, counted up to
   * `limit` at most: a range of the workspace's index by `queued_at`, never its whole history.
   */
  async queuedSince(scope: WorkspaceScope, since: Date, limit: number): Promise<number> {
    const rows: { n: number }[] = await this.db.query(
      `SELECT count(*)::int AS n FROM (
         SELECT 1 FROM compute.runs WHERE workspace_slug = $1 AND queued_at > $2 LIMIT $3
       ) recent`,
      [scope.workspace, since, limit],
    );
    return rows[0]?.n ?? 0;
  }

  /** Cancels the function's runs that have not started (its deletion stops them). */
  async cancelQueuedOfFunction(scope: WorkspaceScope, tx: Tx, functionId: string, reason: string, now: Date) {
    await managerOf(this.db, tx).query(
      `UPDATE compute.runs SET status = 'cancelled', finished_at = $4, error = $3
        WHERE workspace_slug = $1 AND function_id = $2 AND status = 'queued'`,
      [scope.workspace, functionId, JSON.stringify({ name: 'Cancelled', message: reason }), now],
    );
  }

  /**
   * Claims a queued run for `holder` until `leaseUntil` (a worker whose run has its isolate now):
   * whether it was still queued. The worker has the row already (from its job, or read first).
   */
  async take(scope: WorkspaceScope, id: string, holder: string, startedAt: Date, leaseUntil: Date): Promise<boolean> {
    const taken = await queryPrepared<{ id: string }>(
      this.db.manager,
      `UPDATE compute.runs SET status = 'running', worker_id = $3, started_at = $4, lease_expires_at = $5
        WHERE workspace_slug = $1 AND id = $2 AND status = 'queued'
        RETURNING id`,
      [scope.workspace, id, holder, startedAt, leaseUntil],
    );
    return taken.length > 0;
  }

  /** A worker takes over an endpoint run dispatched under `holder`; undefined when that hold is gone. */
  async claimDispatched(
    scope: WorkspaceScope,
    id: string,
    holder: string,
    workerId: string,
    now: Date,
    leaseUntil: Date,
  ): Promise<RunEntity | undefined> {
    const [raw] = await queryPrepared<Record<string, unknown>>(
      this.db.manager,
      `UPDATE compute.runs SET worker_id = $4, started_at = $5, lease_expires_at = $6
        WHERE workspace_slug = $1 AND id = $2 AND status = 'running' AND worker_id = $3
        RETURNING ${this.columns()
          .map((c) => c.databaseName)
          .join(', ')}`,
      [scope.workspace, id, holder, workerId, now, leaseUntil],
    );
    return raw ? this.fromRow(raw) : undefined;
  }

  /** Removes an endpoint run no worker took (503: the request was not queued); whether it was still untaken. */
  async discardUndispatched(scope: WorkspaceScope, id: string, holder: string): Promise<boolean> {
    const rows = await queryPrepared<{ id: string }>(
      this.db.manager,
      `DELETE FROM compute.runs WHERE workspace_slug = $1 AND id = $2 AND status = 'running' AND worker_id = $3
        RETURNING id`,
      [scope.workspace, id, holder],
    );
    return rows.length > 0;
  }

  /** A run from a row as the database returned it (column names), through the entity's own mapping. */
  private fromRow(raw: Record<string, unknown>): RunEntity {
    const run = this.db.manager.create(RunEntity);
    for (const column of this.columns()) column.setEntityValue(run, raw[column.databaseName]);
    return run;
  }

  /** The entity's columns, in a fixed order (statement texts built from them stay the same). */
  private columns(): ColumnMetadata[] {
    this.runColumns ??= this.db.getMetadata(RunEntity).columns;
    return this.runColumns;
  }

  /** Extends the lease of a run this worker still holds; whether it still does. */
  extendLease(scope: WorkspaceScope, id: string, workerId: string, leaseUntil: Date): Promise<boolean> {
    return this.updateHeld(scope, id, workerId, { leaseExpiresAt: leaseUntil });
  }

  /**
   * Gives a run this worker holds but never started back to the queue (the
   * worker stops before an isolate was free for it): `queued` again, as if no
   * worker had claimed it. Whether it still held it.
   */
  async handBack(scope: WorkspaceScope, id: string, workerId: string): Promise<boolean> {
    const rows = await queryPrepared<{ id: string }>(
      this.db.manager,
      `UPDATE compute.runs SET status = 'queued', worker_id = NULL, started_at = NULL, lease_expires_at = NULL
        WHERE workspace_slug = $1 AND id = $2 AND status = 'running' AND worker_id = $3
        RETURNING id`,
      [scope.workspace, id, workerId],
    );
    return rows.length > 0;
  }

  /** Records how a run this worker holds ended; whether it still held it. */
  async finish(scope: WorkspaceScope, id: string, workerId: string, o: RunOutcome): Promise<boolean> {
    const rows = await queryPrepared<{ id: string }>(
      this.db.manager,
      `UPDATE compute.runs SET status = $4, logs = $5, logs_truncated = $6, api_calls = $7, return_value = $8,
              error = $9, memory_usage_bytes = $10, cpu_usage_seconds = $11, finished_at = $12, lease_expires_at = NULL
        WHERE workspace_slug = $1 AND id = $2 AND status = 'running' AND worker_id = $3
        RETURNING id`,
      this.outcomeValues(scope, id, workerId, o),
    );
    return rows.length > 0;
  }

  /**
   * Records how a run ended that was executed from its job without being
   * claimed first (`DeferredClaim`): claim and outcome in one statement,
   * written only if the run is still queued, or held under `holder` (this
   * execution's own claim, whose answer was lost). Whether it was.
   */
  async finishQueued(
    scope: WorkspaceScope,
    id: string,
    holder: string,
    startedAt: Date,
    o: RunOutcome,
  ): Promise<boolean> {
    const rows = await queryPrepared<{ id: string }>(
      this.db.manager,
      `UPDATE compute.runs SET status = $4, logs = $5, logs_truncated = $6, api_calls = $7, return_value = $8,
              error = $9, memory_usage_bytes = $10, cpu_usage_seconds = $11, finished_at = $12, lease_expires_at = NULL,
              worker_id = $3, started_at = COALESCE(started_at, $13)
        WHERE workspace_slug = $1 AND id = $2 AND (status = 'queued' OR (status = 'running' AND worker_id = $3))
        RETURNING id`,
      [...this.outcomeValues(scope, id, holder, o), startedAt],
    );
    return rows.length > 0;
  }

  private outcomeValues(scope: WorkspaceScope, id: string, workerId: string, o: RunOutcome): unknown[] {
    return [
      scope.workspace,
      id,
      workerId,
      o.status,
      o.logs,
      o.logsTruncated,
      o.apiCalls,
      o.returnValue,
      o.error,
      o.memoryUsageBytes,
      o.cpuUsageSeconds.toFixed(6),
      o.finishedAt,
    ];
  }

  /** Changes a run only while it is running and held by `workerId`; whether it was. */
  private async updateHeld(
    scope: WorkspaceScope,
    id: string,
    workerId: string,
    changes: Partial<Omit<RunEntity, 'executionContext' | 'limits'>>,
  ): Promise<boolean> {
    const result = await this.db
      .createQueryBuilder()
      .update(RunEntity)
      .set(changes)
      .where("workspace_slug = :workspace AND id = :id AND status = 'running' AND worker_id = :workerId", {
        workspace: scope.workspace,
        id,
        workerId,
      })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  /** Fails a running run whose lease has expired (its worker is gone); whether it did. */
  async failLost(scope: WorkspaceScope, id: string, now: Date, error: string): Promise<boolean> {
    const result = await this.db
      .createQueryBuilder()
      .update(RunEntity)
      .set({ status: 'failed', error, finishedAt: now, leaseExpiresAt: null })
      .where("workspace_slug = :workspace AND id = :id AND status = 'running' AND lease_expires_at < :now", {
        workspace: scope.workspace,
        id,
        now,
      })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  /** System (every workspace): running runs whose lease expired before `now`, for the lease reaper. */
  expiredLeases(now: Date, limit: number): Promise<{ id: string; workspace_slug: string }[]> {
    return this.db.query(
      `SELECT id, workspace_slug FROM compute.runs
        WHERE status = 'running' AND lease_expires_at < $1 ORDER BY lease_expires_at LIMIT $2`,
      [now, limit],
    );
  }

  /**
   * System (every workspace): the workspaces with a run queued before `before` and not taken, with
   * how many runs each has queued in all (for the sweep, which compares them with its jobs).
   */
  workspacesWithStaleRuns(before: Date, limit: number): Promise<{ workspace_slug: string; queued: number }[]> {
    return this.db.query(
      `SELECT workspace_slug, count(*)::int AS queued FROM compute.runs
        WHERE status = 'queued' GROUP BY workspace_slug HAVING min(queued_at) < $1
        ORDER BY min(queued_at) LIMIT $2`,
      [before, limit],
    );
  }

  /** The workspace's `limit` oldest runs queued before `before`, for re-publishing their jobs. */
  async oldestQueued(scope: WorkspaceScope, before: Date, limit: number): Promise<string[]> {
    const rows: { id: string }[] = await this.db.query(
      `SELECT id FROM compute.runs WHERE workspace_slug = $1 AND status = 'queued' AND queued_at < $2
        ORDER BY queued_at LIMIT $3`,
      [scope.workspace, before, limit],
    );
    return rows.map((row) => row.id);
  }
}
