import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { rowsOf } from '@strata/db';

/**
 * What retention deletes in the webhooks schema, across every workspace (the
 * rows' age decides, not a request). Each statement picks its rows
 * `FOR UPDATE SKIP LOCKED`: sweepers on several replicas share them and never
 * wait on each other.
 */
@Injectable()
export class WebhooksRetentionRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Up to `limit` deliveries finished before `before`, with their attempts; how many deliveries went. */
  async deleteFinishedDeliveries(before: Date, limit: number): Promise<number> {
    const rows = rowsOf<{ id: string }>(
      await this.db.query(
        `WITH gone AS (
           DELETE FROM webhooks.deliveries WHERE id IN (
             SELECT id FROM webhooks.deliveries WHERE completed_at < $1 AND status <> 'retrying'
              ORDER BY completed_at LIMIT $2 FOR UPDATE SKIP LOCKED)
           RETURNING id),
         attempts AS (DELETE FROM webhooks.delivery_attempts a USING gone WHERE a.delivery_id = gone.id)
         SELECT id FROM gone`,
        [before, limit],
      ),
    );
    return rows.length;
  }

  /** Up to `limit` subscription-create Idempotency-Keys stored before `before`; how many went. */
  async deleteIdempotencyKeys(before: Date, limit: number): Promise<number> {
    const rows = rowsOf<{ key: string }>(
      await this.db.query(
        `DELETE FROM webhooks.idempotency_keys WHERE (workspace_slug, key) IN (
           SELECT workspace_slug, key FROM webhooks.idempotency_keys WHERE created_at < $1
            ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING key`,
        [before, limit],
      ),
    );
    return rows.length;
  }
}
