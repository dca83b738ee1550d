import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { StrataException } from '@strata/platform';

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

interface Counts {
  total_1h: number;
  success_1h: number;
  failed_1h: number;
  total_24h: number;
  success_24h: number;
  failed_24h: number;
}

@Injectable()
export class SubscriptionHealthService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async health(workspace: string, subscriptionId: string): Promise<SubscriptionHealth> {
    const [sub] = await this.db.query<{ id: string }[]>(
      'SELECT id FROM webhooks.subscriptions WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NULL',
      [workspace, subscriptionId],
    );
    if (!sub) throw StrataException.notFound(`Webhook subscription ${subscriptionId} not found`);
    const [counts] = await this.db.query<Counts[]>(
      `SELECT count(*) FILTER (WHERE recent)::int AS total_1h,
              count(*) FILTER (WHERE recent AND status = 'success')::int AS success_1h,
              count(*) FILTER (WHERE recent AND status = 'failed')::int AS failed_1h,
              count(*)::int AS total_24h,
              count(*) FILTER (WHERE status = 'success')::int AS success_24h,
              count(*) FILTER (WHERE status = 'failed')::int AS failed_24h
         FROM (SELECT status, created_at > now() - interval '1 hour' AS recent FROM webhooks.deliveries
                WHERE subscription_id = $1 AND created_at > now() - interval '24 hours') d`,
      [subscriptionId],
    );
    const [failure] = await this.db.query<{ recorded_at: Date; error: string | null }[]>(
      `SELECT recorded_at, error FROM webhooks.delivery_attempts
        WHERE subscription_id = $1 AND outcome <> 'success' ORDER BY recorded_at DESC LIMIT 1`,
      [subscriptionId],
    );
    const c = counts!;
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
