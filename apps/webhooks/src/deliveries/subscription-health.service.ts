import { Injectable } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository.js';
import { DeliveriesRepository } from './deliveries.repository.js';

/** `GET /webhook-subscriptions/{id}/health`. The circuit breaker's state is not exposed. */
export interface SubscriptionHealth {
  /** Of the deliveries created in the last hour that have finished, the share that succeeded (0 to 1); null when none has finished. */
  successRate1h: number | null;
  successRate24h: number | null;
  /** Deliveries created in the last hour, whatever their state. */
  totalDeliveries1h: number;
  totalDeliveries24h: number;
  /** The last attempt that did not succeed (failed, rejected by an open circuit, or interrupted). */
  lastFailureAt: string | null;
  lastFailureError: string | null;
}

@Injectable()
export class SubscriptionHealthService {
  constructor(
    private readonly subscriptions: SubscriptionsRepository,
    private readonly deliveries: DeliveriesRepository,
  ) {}

  async health(scope: WorkspaceScope, subscriptionId: string): Promise<SubscriptionHealth> {
    if (!(await this.subscriptions.find(scope, subscriptionId))) {
      throw StrataException.notFound(`Webhook subscription ${subscriptionId} not found`);
    }
    const c = await this.deliveries.counts(scope, subscriptionId);
    const failure = await this.deliveries.lastFailure(scope, subscriptionId);
    return {
      successRate1h: rate(c.success_1h, c.failed_1h),
      successRate24h: rate(c.success_24h, c.failed_24h),
      totalDeliveries1h: c.total_1h,
      totalDeliveries24h: c.total_24h,
      lastFailureAt: failure?.recorded_at.toISOString() ?? null,
      lastFailureError: failure?.error ?? null,
    };
  }
}

function rate(success: number, failed: number): number | null {
  const finished = success + failed;
  return finished === 0 ? null : Math.round((success / finished) * 10_000) / 10_000;
}
