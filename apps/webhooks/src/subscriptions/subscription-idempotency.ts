import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { IdempotencyKeys } from '@strata/platform';
import { WebhooksConfig } from '../webhooks.config.js';

/**
 * `Idempotency-Key` on subscription create: the key remembers the subscription
 * it made (not the response, which holds the secret), in the same transaction;
 * a repeat inside the window answers that subscription with its secret again.
 * Concurrent repeats wait on an advisory lock. Reusing a key for a different
 * request is a 422.
 */
@Injectable()
export class SubscriptionIdempotency {
  constructor(private readonly config: WebhooksConfig) {}

  /** The subscription an earlier request with this key created, or undefined (after taking the key's lock). */
  async lookup(tx: EntityManager, workspace: string, key: string, request: unknown): Promise<string | undefined> {
    IdempotencyKeys.check(key);
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`webhooks-idempotency:${workspace}:${key}`]);
    const [stored] = await tx.query<{ request_hash: string; subscription_id: string }[]>(
      `SELECT request_hash, subscription_id FROM webhooks.idempotency_keys
        WHERE workspace_slug = $1 AND key = $2 AND created_at > now() - make_interval(hours => $3)`,
      [workspace, key, this.config.WEBHOOKS_IDEMPOTENCY_WINDOW_HOURS],
    );
    if (!stored) return undefined;
    if (stored.request_hash !== IdempotencyKeys.fingerprint(JSON.stringify(request))) {
      throw IdempotencyKeys.reused();
    }
    return stored.subscription_id;
  }

  async remember(
    tx: EntityManager,
    workspace: string,
    key: string,
    request: unknown,
    subscriptionId: string,
  ): Promise<void> {
    await tx.query(
      `INSERT INTO webhooks.idempotency_keys (workspace_slug, key, request_hash, subscription_id) VALUES ($1, $2, $3, $4)
       ON CONFLICT (workspace_slug, key) DO UPDATE SET request_hash = $3, subscription_id = $4, created_at = now()`,
      [workspace, key, IdempotencyKeys.fingerprint(JSON.stringify(request)), subscriptionId],
    );
  }
}
