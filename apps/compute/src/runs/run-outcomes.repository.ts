import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { queryPrepared, type WorkspaceScope } from '@strata/db';
import type { RunOutcome } from './runs.repository.js';

/** One run's outcome as a worker writes it, alone or in a batch with other runs' (`finishAll`). */
export interface OutcomeWrite {
  readonly id: string;
  /** The name the run is held under (or, `queued`, claimed under by this write). */
  readonly holder: string;
  /**
   * Set for a run executed before it was claimed (`DeferredClaim`): claim and
   * outcome in one write, taken only while the run is still queued (or held under
   * `holder`, a claim whose answer was lost); the run's `startedAt` if it has none.
   */
  readonly queued?: { readonly startedAt: Date };
  readonly outcome: RunOutcome;
}

/**
 * One statement for the outcomes of many runs of a workspace: each row is
 * written under the same conditions as the single-run statements (`finish`,
 * `finishQueued` of RunsRepository), so a batch changes nothing a run's own
 * write would not. The rows come as arrays (`unnest`), one prepared statement
 * whatever the batch's size; the `OFFSET 0` keeps them a subquery PostgreSQL
 * joins by the primary key, one index probe per run (a flattened join was
 * planned as a scan of the workspace's runs with a backlog; docs/performance.md).
 * A batch never names a run twice (the batcher's `distinct`).
 */
const FINISH_ALL = `UPDATE compute.runs r
    SET status = v.status, logs = v.logs, logs_truncated = v.logs_truncated, api_calls = v.api_calls,
        return_value = v.return_value, error = v.error, memory_usage_bytes = v.memory_usage_bytes,
        cpu_usage_seconds = v.cpu_usage_seconds, finished_at = v.finished_at, lease_expires_at = NULL,
        worker_id = v.worker_id, started_at = COALESCE(r.started_at, v.started_at)
   FROM (SELECT u.*, $1::text AS workspace_slug
           FROM unnest($2::uuid[], $3::text[], $4::boolean[], $5::timestamptz[], $6::text[], $7::text[],
                       $8::boolean[], $9::text[], $10::text[], $11::text[], $12::bigint[], $13::numeric[],
                       $14::timestamptz[])
             AS u(id, worker_id, queued, started_at, status, logs, logs_truncated, api_calls, return_value,
                  error, memory_usage_bytes, cpu_usage_seconds, finished_at)
         OFFSET 0) v
  WHERE r.workspace_slug = v.workspace_slug AND r.id = v.id
    AND ((v.queued AND r.status = 'queued') OR (r.status = 'running' AND r.worker_id = v.worker_id))
  RETURNING r.id, r.worker_id`;

@Injectable()
export class RunOutcomesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Writes the outcomes of `writes` (runs of the scope's workspace) in one statement; for each, whether it was written. */
  async finishAll(scope: WorkspaceScope, writes: readonly OutcomeWrite[]): Promise<boolean[]> {
    // Rows locked in the order of their ids (the join follows the arrays): two statements sharing runs (two
    // deliveries of one job) do not deadlock on each other.
    const sorted = [...writes].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const column = <V>(of: (w: OutcomeWrite) => V): V[] => sorted.map(of);
    const rows = await queryPrepared<{ id: string; worker_id: string }>(this.db.manager, FINISH_ALL, [
      scope.workspace,
      column((w) => w.id),
      column((w) => w.holder),
      column((w) => w.queued !== undefined),
      column((w) => w.queued?.startedAt ?? null),
      column((w) => w.outcome.status),
      column((w) => w.outcome.logs),
      column((w) => w.outcome.logsTruncated),
      column((w) => w.outcome.apiCalls),
      column((w) => w.outcome.returnValue),
      column((w) => w.outcome.error),
      column((w) => w.outcome.memoryUsageBytes),
      column((w) => w.outcome.cpuUsageSeconds.toFixed(6)),
      column((w) => w.outcome.finishedAt),
    ]);
    // A row is this write's when it now holds the write's name (a queued run took it with this write).
    const written = new Set(rows.map((r) => `${r.id} ${r.worker_id}`));
    return writes.map((w) => written.has(`${w.id} ${w.holder}`));
  }
}
