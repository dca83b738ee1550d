import { Injectable } from '@nestjs/common';
import type { Tx, WorkspaceScope } from '@strata/db';
import { IdempotencyKeys } from '@strata/platform';
import { WebhooksConfig } from '../webhooks.config.js';
import { SubscriptionIdempotencyRepository } from './subscription-idempotency.repository.js';

/**
 * `Idempotency-Key` on subscription create: the key remembers the subscription
 * it made (not the response, which holds the secret), in the same transaction;
 * a repeat inside the window answers that subscription with its secret again.
 * Concurrent repeats wait on an advisory lock. Reusing a key for a different
 * request is a 422.
 */
@Injectable()
export class SubscriptionIdempotency {
  constructor(
    private readonly config: WebhooksConfig,
    private readonly keys: SubscriptionIdempotencyRepository,
  ) {}

  /** The subscription an earlier request with this key created, or undefined (after taking the key's lock). */
  async lookup(scope: WorkspaceScope, tx: Tx, key: string, request: unknown): Promise<string | undefined> {
    IdempotencyKeys.check(key);
    await this.keys.lock(scope, tx, key);
    const stored = await this.keys.find(scope, tx, key, this.config.WEBHOOKS_IDEMPOTENCY_WINDOW_HOURS);
    if (!stored) return undefined;
    if (stored.request_hash !== IdempotencyKeys.fingerprint(JSON.stringify(request))) {
      throw IdempotencyKeys.reused();
    }
    return stored.subscription_id;
  }

  async remember(scope: WorkspaceScope, tx: Tx, key: string, request: unknown, subscriptionId: string): Promise<void> {
    await this.keys.store(scope, tx, key, IdempotencyKeys.fingerprint(JSON.stringify(request)), subscriptionId);
  }
}
