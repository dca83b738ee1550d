import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, type Tx, type WorkspaceScope } from '@strata/db';

/** webhooks.idempotency_keys: the subscription each Idempotency-Key of a workspace created. */
@Injectable()
export class SubscriptionIdempotencyRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Makes concurrent requests with the same key wait for the first one's transaction. */
  async lock(scope: WorkspaceScope, tx: Tx, key: string): Promise<void> {
    await managerOf(this.db, tx).query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `webhooks-idempotency:${scope.workspace}:${key}`,
    ]);
  }

  async find(
    scope: WorkspaceScope,
    tx: Tx,
    key: string,
    windowHours: number,
  ): Promise<{ request_hash: string; subscription_id: string } | undefined> {
    const [stored] = await managerOf(this.db, tx).query<{ request_hash: string; subscription_id: string }[]>(
      `SELECT request_hash, subscription_id FROM webhooks.idempotency_keys
        WHERE workspace_slug = $1 AND key = $2 AND created_at > now() - make_interval(hours => $3)`,
      [scope.workspace, key, windowHours],
    );
    return stored;
  }

  async store(scope: WorkspaceScope, tx: Tx, key: string, requestHash: string, subscriptionId: string): Promise<void> {
    await managerOf(this.db, tx).query(
      `INSERT INTO webhooks.idempotency_keys (workspace_slug, key, request_hash, subscription_id) VALUES ($1, $2, $3, $4)
       ON CONFLICT (workspace_slug, key) DO UPDATE SET request_hash = $3, subscription_id = $4, created_at = now()`,
      [scope.workspace, key, requestHash, subscriptionId],
    );
  }
}
