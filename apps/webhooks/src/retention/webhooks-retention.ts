import { Injectable } from '@nestjs/common';
import { Clock, RetentionSweep, type RetentionRule } from '@strata/platform';
import { WebhooksConfig } from '../webhooks.config.js';
import { WebhooksRetentionRepository } from './webhooks-retention.repository.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The webhooks service's retention (docs/webhooks.md, "Retention"), every
 * WEBHOOKS_RETENTION_SWEEP_INTERVAL_MS on each replica with
 * WEBHOOKS_RETENTION_SWEEP_ENABLED:
 * - deliveries that finished (`success` or `failed`) more than
 *   WEBHOOKS_DELIVERY_RETENTION_DAYS ago, with their attempts; a delivery still
 *   retrying is never touched;
 * - subscription-create Idempotency-Keys older than their window
 *   (WEBHOOKS_IDEMPOTENCY_WINDOW_HOURS): a repeat after it creates anew anyway.
 */
@Injectable()
export class WebhooksRetention extends RetentionSweep {
  constructor(
    private readonly retention: WebhooksRetentionRepository,
    private readonly config: WebhooksConfig,
    clock: Clock,
  ) {
    super('webhooks retention', clock, {
      enabled: config.WEBHOOKS_RETENTION_SWEEP_ENABLED,
      intervalMs: config.WEBHOOKS_RETENTION_SWEEP_INTERVAL_MS,
    });
  }

  protected rules(now: Date): readonly RetentionRule[] {
    const deliveriesBefore = new Date(now.getTime() - this.config.WEBHOOKS_DELIVERY_RETENTION_DAYS * DAY_MS);
    const keysBefore = new Date(now.getTime() - this.config.WEBHOOKS_IDEMPOTENCY_WINDOW_HOURS * HOUR_MS);
    return [
      {
        table: 'webhooks.deliveries',
        // A delivery takes its attempts (up to five, and the rejected ones) with it.
        batchSize: 500,
        deleteBatch: (limit) => this.retention.deleteFinishedDeliveries(deliveriesBefore, limit),
      },
      {
        table: 'webhooks.idempotency_keys',
        deleteBatch: (limit) => this.retention.deleteIdempotencyKeys(keysBefore, limit),
      },
    ];
  }
}
