import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, rowsOf, type Tx, type WorkspaceScope } from '@strata/db';
import { SUMMARY_COLUMNS, type AttemptRow, type DeliveryRow } from './delivery.js';

export interface DeliveryFilter {
  readonly subscriptionId?: string | undefined;
  readonly status?: string | undefined;
  readonly since?: string | undefined;
  readonly until?: string | undefined;
  readonly limit: number;
  readonly offset: number;
}

/** Deliveries created in the last hour and day of one subscription, by outcome. */
export interface DeliveryCounts {
  total_1h: number;
  success_1h: number;
  failed_1h: number;
  total_24h: number;
  success_24h: number;
  failed_24h: number;
}

/**
 * webhooks.deliveries and webhooks.delivery_attempts as a workspace reads
 * them: every statement carries `workspace_slug = scope.workspace` (attempts
 * have the column too).
 */
@Injectable()
export class DeliveriesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Summaries, newest first: of one subscription, or of the whole workspace. */
  list(scope: WorkspaceScope, f: DeliveryFilter): Promise<DeliveryRow[]> {
    return this.db.query<DeliveryRow[]>(
      `SELECT ${SUMMARY_COLUMNS} FROM webhooks.deliveries
        WHERE workspace_slug = $1 AND ($2::uuid IS NULL OR subscription_id = $2)
          AND ($3::text IS NULL OR status = $3)
          AND ($4::timestamptz IS NULL OR created_at >= $4) AND ($5::timestamptz IS NULL OR created_at < $5)
        ORDER BY created_at DESC, id DESC LIMIT $6 OFFSET $7`,
      [
        scope.workspace,
        f.subscriptionId ?? null,
        f.status ?? null,
        f.since ?? null,
        f.until ?? null,
        f.limit,
        f.offset,
      ],
    );
  }

  /** A delivery of the workspace (of the subscription, when given); locked FOR SHARE in `tx` when given. */
  async find(
    scope: WorkspaceScope,
    id: string,
    options: { subscriptionId?: string | undefined; tx?: Tx } = {},
  ): Promise<DeliveryRow | undefined> {
    const [row] = await managerOf(this.db, options.tx).query<DeliveryRow[]>(
      `SELECT * FROM webhooks.deliveries
        WHERE workspace_slug = $1 AND id = $2 AND ($3::uuid IS NULL OR subscription_id = $3)${options.tx ? ' FOR SHARE' : ''}`,
      [scope.workspace, id, options.subscriptionId ?? null],
    );
    return row;
  }

  /**
   * A delivery and its attempts read in one snapshot (REPEATABLE READ): an attempt
   * and the delivery's new status are committed together, so the detail never
   * shows an attempt without the status it led to.
   */
  async withAttempts(
    scope: WorkspaceScope,
    id: string,
    subscriptionId: string | undefined,
  ): Promise<{ row: DeliveryRow; attempts: AttemptRow[] } | undefined> {
    return this.db.transaction('REPEATABLE READ', async (manager) => {
      const [row] = await manager.query<DeliveryRow[]>(
        `SELECT * FROM webhooks.deliveries
          WHERE workspace_slug = $1 AND id = $2 AND ($3::uuid IS NULL OR subscription_id = $3)`,
        [scope.workspace, id, subscriptionId ?? null],
      );
      if (!row) return undefined;
      const attempts = await manager.query<AttemptRow[]>(
        `SELECT attempt, outcome, http_status, error, duration_ms, recorded_at FROM webhooks.delivery_attempts
          WHERE workspace_slug = $1 AND delivery_id = $2 ORDER BY attempt, id`,
        [scope.workspace, id],
      );
      return { row, attempts };
    });
  }

  /** Stops a retrying delivery with `reason`; undefined when there is no retrying delivery of that id. */
  async cancel(scope: WorkspaceScope, id: string, reason: string): Promise<DeliveryRow | undefined> {
    const rows = rowsOf<DeliveryRow>(
      await this.db.query(
        `UPDATE webhooks.deliveries SET status = 'failed', last_error = $3, next_attempt_at = NULL, leased = false,
                completed_at = now(), updated_at = now()
          WHERE workspace_slug = $1 AND id = $2 AND status = 'retrying' RETURNING ${SUMMARY_COLUMNS}`,
        [scope.workspace, id, reason],
      ),
    );
    return rows[0];
  }

  async counts(scope: WorkspaceScope, subscriptionId: string): Promise<DeliveryCounts> {
    const [counts] = await this.db.query<DeliveryCounts[]>(
      `SELECT count(*) FILTER (WHERE recent)::int AS total_1h,
              count(*) FILTER (WHERE recent AND status = 'success')::int AS success_1h,
              count(*) FILTER (WHERE recent AND status = 'failed')::int AS failed_1h,
              count(*)::int AS total_24h,
              count(*) FILTER (WHERE status = 'success')::int AS success_24h,
              count(*) FILTER (WHERE status = 'failed')::int AS failed_24h
         FROM (SELECT status, created_at > now() - interval '1 hour' AS recent FROM webhooks.deliveries
                WHERE workspace_slug = $1 AND subscription_id = $2 AND created_at > now() - interval '24 hours') d`,
      [scope.workspace, subscriptionId],
    );
    return counts!;
  }

  /** The subscription's last attempt that did not succeed (failed, rejected by an open circuit, or interrupted). */
  async lastFailure(
    scope: WorkspaceScope,
    subscriptionId: string,
  ): Promise<{ recorded_at: Date; error: string | null } | undefined> {
    const [failure] = await this.db.query<{ recorded_at: Date; error: string | null }[]>(
      `SELECT recorded_at, error FROM webhooks.delivery_attempts
        WHERE workspace_slug = $1 AND subscription_id = $2 AND outcome <> 'success' ORDER BY recorded_at DESC LIMIT 1`,
      [scope.workspace, subscriptionId],
    );
    return failure;
  }
}
