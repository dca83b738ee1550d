import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { Clock } from '@strata/platform';
import { SPEC_BREAKER, breakerId, isOpen, trips, type BreakerKey, type WindowTraffic } from './circuit-policy.js';

/**
 * Circuit breakers per workspace and receiver origin, shared by every replica:
 * the rolling window is read from the attempts table (the requests every
 * replica actually sent for the workspace) and an open circuit is a row of
 * webhooks.receiver_circuits, so all replicas see one state. Time is the
 * service's `Clock`: the instant an attempt is recorded at is the one the window
 * counts and the quiet time is measured from.
 */
@Injectable()
export class ReceiverCircuits {
  private readonly logger = new Logger('ReceiverCircuits');
  readonly settings = SPEC_BREAKER;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly clock: Clock,
  ) {}

  /**
   * Of these breakers, the ones whose circuit is open now (as `breakerId`s);
   * circuits that have been quiet long enough are closed.
   */
  async openAmong(keys: readonly BreakerKey[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const unique = [...new Map(keys.map((k) => [breakerId(k), k])).values()];
    const rows = await this.db.query<
      { workspace_slug: string; receiver: string; opened_at: Date; last_request_at: Date | null }[]
    >(
      `SELECT c.workspace_slug, c.receiver, c.opened_at,
              (SELECT max(a.recorded_at) FROM webhooks.delivery_attempts a
                WHERE a.workspace_slug = c.workspace_slug AND a.receiver = c.receiver
                  AND a.outcome IN ('success', 'failure')) AS last_request_at
         FROM webhooks.receiver_circuits c
         JOIN unnest($1::text[], $2::text[]) AS k(workspace_slug, receiver)
           ON c.workspace_slug = k.workspace_slug AND c.receiver = k.receiver`,
      [unique.map((k) => k.workspace), unique.map((k) => k.receiver)],
    );
    const now = this.clock.now();
    const open = new Set<string>();
    for (const row of rows) {
      const key = { workspace: row.workspace_slug, receiver: row.receiver };
      if (isOpen({ openedAt: row.opened_at, lastRequestAt: row.last_request_at }, now, this.settings)) {
        open.add(breakerId(key));
      } else {
        await this.db.query(
          'DELETE FROM webhooks.receiver_circuits WHERE workspace_slug = $1 AND receiver = $2 AND opened_at = $3',
          [row.workspace_slug, row.receiver, row.opened_at],
        );
        this.logger.log({ msg: 'circuit closed', ...key });
      }
    }
    return open;
  }

  /**
   * After a failed request of `key`'s workspace to its receiver, recorded in `tx`
   * at `at`: opens the circuit when the rolling window ending at `at` now trips it.
   * An open circuit stays as it is.
   */
  async afterFailure(tx: EntityManager, key: BreakerKey, at: Date): Promise<void> {
    // One failure at a time per breaker: a failure recorded concurrently commits before
    // this count starts, so the last of five simultaneous failures sees all five.
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [breakerId(key)]);
    const [traffic] = await tx.query<WindowTraffic[]>(
      `SELECT count(*)::int AS requests, (count(*) FILTER (WHERE outcome = 'failure'))::int AS failures
         FROM webhooks.delivery_attempts
        WHERE workspace_slug = $1 AND receiver = $2 AND outcome IN ('success', 'failure')
          AND recorded_at > $3::timestamptz - make_interval(secs => $4::double precision / 1000)`,
      [key.workspace, key.receiver, at, this.settings.windowMs],
    );
    if (!traffic || !trips(traffic, this.settings)) return;
    const opened = await tx.query<{ receiver: string }[]>(
      `INSERT INTO webhooks.receiver_circuits (workspace_slug, receiver, opened_at) VALUES ($1, $2, $3)
       ON CONFLICT (workspace_slug, receiver) DO NOTHING RETURNING receiver`,
      [key.workspace, key.receiver, at],
    );
    if (opened.length) this.logger.warn({ msg: 'circuit opened', ...key, ...traffic });
  }
}
