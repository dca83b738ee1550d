import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { WebhooksConfig } from '../webhooks.config.js';
import { SPEC_BREAKER, isOpen, trips, type BreakerSettings, type WindowTraffic } from './circuit-policy.js';

/**
 * Circuit breakers per receiver, shared by every replica: the rolling window is
 * read from the attempts table (the requests every replica actually sent) and an
 * open circuit is a row of webhooks.receiver_circuits, so all replicas see one
 * state. Time is the database's clock, the one clock replicas share.
 */
@Injectable()
export class ReceiverCircuits {
  private readonly logger = new Logger('ReceiverCircuits');
  readonly settings: BreakerSettings;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    config: WebhooksConfig,
  ) {
    this.settings = {
      ...SPEC_BREAKER,
      windowMs: config.WEBHOOKS_BREAKER_WINDOW_MS,
      resetMs: config.WEBHOOKS_BREAKER_RESET_MS,
    };
  }

  /** Of these receivers, the ones whose circuit is open now; circuits that have been quiet long enough are closed. */
  async openAmong(receivers: readonly string[]): Promise<Set<string>> {
    if (receivers.length === 0) return new Set();
    const rows = await this.db.query<{ receiver: string; opened_at: Date; last_request_at: Date | null; now: Date }[]>(
      `SELECT c.receiver, c.opened_at, now() AS now,
              (SELECT max(a.recorded_at) FROM webhooks.delivery_attempts a
                WHERE a.receiver = c.receiver AND a.outcome IN ('success', 'failure')) AS last_request_at
         FROM webhooks.receiver_circuits c WHERE c.receiver = ANY($1::text[])`,
      [receivers],
    );
    const open = new Set<string>();
    for (const row of rows) {
      if (isOpen({ openedAt: row.opened_at, lastRequestAt: row.last_request_at }, row.now, this.settings)) {
        open.add(row.receiver);
      } else {
        await this.db.query('DELETE FROM webhooks.receiver_circuits WHERE receiver = $1 AND opened_at = $2', [
          row.receiver,
          row.opened_at,
        ]);
        this.logger.log({ msg: 'circuit closed', receiver: row.receiver });
      }
    }
    return open;
  }

  /**
   * After a failed request to `receiver` (recorded in `tx`): opens its circuit when
   * the rolling window now trips it. An open circuit stays as it is.
   */
  async afterFailure(tx: EntityManager, receiver: string): Promise<void> {
    const [traffic] = await tx.query<WindowTraffic[]>(
      `SELECT count(*)::int AS requests, (count(*) FILTER (WHERE outcome = 'failure'))::int AS failures
         FROM webhooks.delivery_attempts
        WHERE receiver = $1 AND outcome IN ('success', 'failure')
          AND recorded_at > now() - make_interval(secs => $2::double precision / 1000)`,
      [receiver, this.settings.windowMs],
    );
    if (!traffic || !trips(traffic, this.settings)) return;
    const opened = await tx.query<{ receiver: string }[]>(
      `INSERT INTO webhooks.receiver_circuits (receiver, opened_at) VALUES ($1, now())
       ON CONFLICT (receiver) DO NOTHING RETURNING receiver`,
      [receiver],
    );
    if (opened.length) this.logger.warn({ msg: 'circuit opened', receiver, ...traffic });
  }
}
