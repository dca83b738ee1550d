import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, rowsOf, type Tx, type WorkspaceScope } from '@strata/db';
import { Clock } from '@strata/platform';
import { ReceiverCircuits } from '../breaker/receiver-circuits.repository.js';
import { WebhooksConfig } from '../webhooks.config.js';
import type { DeliveryRow } from './delivery.js';
import { MAX_ATTEMPTS, RetrySchedule } from './retry-schedule.js';
import { ownerOf, type SubscriptionOwner } from '../subscriptions/subscription.js';

/** A claimed attempt: the delivery (attempt_count already counts it) and its subscription's receiver and secrets. */
export interface ClaimedAttempt {
  readonly delivery: DeliveryRow;
  readonly url: string;
  readonly sealedSecret: string;
  /** The previous secret while its rotation grace lasts, else null. */
  readonly sealedPreviousSecret: string | null;
}

/** How an attempt ended. */
export type AttemptOutcome =
  | {
      readonly kind: 'success' | 'failure';
      readonly receiver: string;
      readonly httpStatus: number | null;
      readonly error: string | null;
      readonly requestHeaders: Record<string, string>;
      readonly responseBody: string | null;
      readonly durationMs: number;
    }
  | { readonly kind: 'rejected'; readonly receiver: string; readonly error: string };

export interface NewDelivery {
  readonly id: string;
  readonly subscriptionId: string;
  readonly event: string;
  readonly recordSlug: string | null;
  readonly body: string;
  readonly isTest: boolean;
  readonly replayedFrom: string | null;
  /** Created with attempt 1 claimed by the caller. */
  readonly claimed: boolean;
}

type ClaimRow = DeliveryRow & {
  was_leased: boolean;
  url: string;
  sealed_secret: string;
  sealed_previous_secret: string | null;
};

const INTERRUPTED = (attempt: number) => `Attempt ${attempt} was interrupted (the service stopped during it)`;

/**
 * The delivery pipeline's writes: new deliveries, claims of due attempts (FOR
 * UPDATE SKIP LOCKED, so replicas never claim the same attempt) and outcomes.
 * A claim counts the attempt and leases the delivery until the schedule's next
 * due time, in one committed statement before anything is sent: a replica that
 * dies mid-attempt leaves a delivery whose next attempt comes due by itself, and
 * no attempt slot is ever sent twice.
 *
 * Creating deliveries is done within a workspace (the scope of an event the
 * consumer took, or of a request); claims and outcomes run over the due
 * attempts of every workspace, each written back to its own delivery row.
 *
 * Due times, leases and the instants attempts are recorded at come from the
 * service's `Clock` (passed to every statement), so a test moves the schedule on
 * by moving the clock; row bookkeeping (created_at, updated_at, completed_at) is
 * the database's.
 */
@Injectable()
export class DeliveryStore {
  readonly schedule: RetrySchedule;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly circuits: ReceiverCircuits,
    private readonly clock: Clock,
    config: WebhooksConfig,
  ) {
    this.schedule = RetrySchedule.parse(config.WEBHOOKS_RETRY_DELAYS_MS, config.WEBHOOKS_ATTEMPT_TIMEOUT_MS);
  }

  /**
   * One delivery per matching subscription of the workspace (active, naming the
   * event, naming the collection or none, and created before the event
   * happened, so a consumer reading old events again never sends them to newer
   * subscriptions), due now. A repeated event id makes nothing new. Returns how many deliveries were created.
   */
  /** The subscriptions an event matches (active, its event and collection, older than the event), with their owners. */
  async subscribersOf(
    scope: WorkspaceScope,
    event: string,
    recordSlug: string,
    occurredAt: string,
  ): Promise<{ id: string; owner: SubscriptionOwner }[]> {
    const rows = await this.db.query<{ id: string; created_by: string; created_by_type: string | null }[]>(
      `SELECT s.id, s.created_by, s.created_by_type FROM webhooks.subscriptions s
        WHERE s.workspace_slug = $1 AND s.active AND s.deleted_at IS NULL AND $3 = ANY(s.events)
          AND (s.record_slugs IS NULL OR $2 = ANY(s.record_slugs)) AND s.created_at <= $4`,
      [scope.workspace, recordSlug, event, occurredAt],
    );
    return rows.map((r) => ({ id: r.id, owner: ownerOf(r.created_by, r.created_by_type) }));
  }

  /** One delivery of the event per subscription of `subscriptionIds` that still matches it. */
  async createForEvent(
    scope: WorkspaceScope,
    subscriptionIds: readonly string[],
    eventId: string,
    event: string,
    recordSlug: string,
    body: string,
    occurredAt: string,
  ): Promise<number> {
    if (subscriptionIds.length === 0) return 0;
    const rows = await this.db.query<{ id: string }[]>(
      `INSERT INTO webhooks.deliveries
         (id, workspace_slug, subscription_id, event_id, event, record_slug, request_body, next_attempt_at)
       SELECT gen_random_uuid(), s.workspace_slug, s.id, $3, $4, $2, $5, $7
         FROM webhooks.subscriptions s
        WHERE s.workspace_slug = $1 AND s.active AND s.deleted_at IS NULL AND $4 = ANY(s.events)
          AND (s.record_slugs IS NULL OR $2 = ANY(s.record_slugs)) AND s.created_at <= $6 AND s.id = ANY($8)
       ON CONFLICT (subscription_id, event_id) WHERE event_id IS NOT NULL DO NOTHING
       RETURNING id`,
      [scope.workspace, recordSlug, eventId, event, body, occurredAt, this.clock.now(), subscriptionIds],
    );
    return rows.length;
  }

  /**
   * A delivery written by hand: a replay (`replayedFrom`), due now, or a test,
   * created already claimed for its first attempt (the caller sends it at once
   * and answers with the outcome).
   */
  async insert(scope: WorkspaceScope, tx: Tx, d: NewDelivery): Promise<DeliveryRow> {
    // Written from the subscription's row in the scope's workspace: no row, no delivery.
    const [row] = await managerOf(this.db, tx).query<DeliveryRow[]>(
      `INSERT INTO webhooks.deliveries
         (id, workspace_slug, subscription_id, event, record_slug, is_test, replayed_from, request_body,
          attempt_count, leased, next_attempt_at)
       SELECT $1, s.workspace_slug, s.id, $4, $5, $6, $7, $8, $9, $10,
              $12::timestamptz + make_interval(secs => $11::double precision / 1000)
         FROM webhooks.subscriptions s WHERE s.workspace_slug = $2 AND s.id = $3
       RETURNING *`,
      [
        d.id,
        scope.workspace,
        d.subscriptionId,
        d.event,
        d.recordSlug,
        d.isTest,
        d.replayedFrom,
        d.body,
        d.claimed ? 1 : 0,
        d.claimed,
        d.claimed ? this.schedule.leaseMs(1) : 0,
        this.clock.now(),
      ],
    );
    if (!row) throw new Error(`subscription ${d.subscriptionId} is not in the scope of ${scope.workspace}`);
    return row;
  }

  /**
   * Fails deliveries whose fifth attempt was claimed and never answered (its
   * replica died): there is no attempt left to make.
   */
  async failLostLastAttempts(): Promise<number> {
    const rows = await this.db.query<{ id: string }[]>(
      `WITH lost AS (
         UPDATE webhooks.deliveries SET status = 'failed', leased = false, next_attempt_at = NULL,
                last_error = $2, completed_at = now(), updated_at = now()
          WHERE status = 'retrying' AND next_attempt_at <= $3 AND attempt_count >= $1
          RETURNING id, workspace_slug, subscription_id, attempt_count)
       INSERT INTO webhooks.delivery_attempts
         (delivery_id, workspace_slug, subscription_id, attempt, outcome, error, recorded_at)
       SELECT id, workspace_slug, subscription_id, attempt_count, 'interrupted', $2, $3 FROM lost
       RETURNING delivery_id AS id`,
      [MAX_ATTEMPTS, INTERRUPTED(MAX_ATTEMPTS), this.clock.now()],
    );
    return rows.length;
  }

  /**
   * Claims up to `limit` due attempts of active subscriptions, oldest due first.
   * An attempt whose lease ran out unanswered is logged as interrupted; the claim
   * is then the next attempt.
   */
  async claimDue(limit: number): Promise<ClaimedAttempt[]> {
    if (limit <= 0) return [];
    const now = this.clock.now();
    return this.db.transaction(async (tx) => {
      const rows = rowsOf<ClaimRow>(
        await tx.query(
          `WITH due AS (
           SELECT d.id, d.leased AS was_leased FROM webhooks.deliveries d
             JOIN webhooks.subscriptions s ON s.id = d.subscription_id AND s.active AND s.deleted_at IS NULL
            WHERE d.status = 'retrying' AND d.next_attempt_at <= $4 AND d.attempt_count < $2
            ORDER BY d.next_attempt_at LIMIT $1
            FOR UPDATE OF d SKIP LOCKED)
         UPDATE webhooks.deliveries d
            SET attempt_count = d.attempt_count + 1, leased = true, updated_at = now(),
                next_attempt_at = $4::timestamptz
                  + make_interval(secs => ($3::int[])[d.attempt_count + 1]::double precision / 1000)
           FROM due, webhooks.subscriptions s
          WHERE d.id = due.id AND s.id = d.subscription_id
         RETURNING d.*, due.was_leased, s.url, s.secret AS sealed_secret,
                   CASE WHEN s.previous_secret_valid_until > $4 THEN s.previous_secret END AS sealed_previous_secret`,
          [limit, MAX_ATTEMPTS, this.schedule.leases(), now],
        ),
      );
      const lost = rows.filter((r) => r.was_leased);
      if (lost.length) {
        await tx.query(
          `INSERT INTO webhooks.delivery_attempts
             (delivery_id, workspace_slug, subscription_id, attempt, outcome, error, recorded_at)
           SELECT d, w, s, a, 'interrupted', e, $6
             FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::int[], $5::text[]) AS t(d, w, s, a, e)`,
          [
            lost.map((r) => r.id),
            lost.map((r) => r.workspace_slug),
            lost.map((r) => r.subscription_id),
            lost.map((r) => r.attempt_count - 1),
            lost.map((r) => INTERRUPTED(r.attempt_count - 1)),
            now,
          ],
        );
      }
      return rows.map(({ was_leased: _w, url, sealed_secret, sealed_previous_secret, ...delivery }) => ({
        delivery,
        url,
        sealedSecret: sealed_secret,
        sealedPreviousSecret: sealed_previous_secret,
      }));
    });
  }

  /**
   * Records an attempt's outcome and moves the delivery on: `success`, the next
   * due time, or `failed` after the fifth. A delivery cancelled meanwhile keeps
   * its state; the attempt is logged all the same. A failed request may open
   * the circuit of the workspace and receiver.
   */
  async recordOutcome(delivery: DeliveryRow, outcome: AttemptOutcome): Promise<void> {
    const attempt = delivery.attempt_count;
    const now = this.clock.now();
    const next = outcome.kind === 'success' ? undefined : this.schedule.afterFailure(attempt);
    const status = outcome.kind === 'success' ? 'success' : next!.status;
    const delayMs = next?.status === 'retrying' ? next.delayMs : null;
    await this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO webhooks.delivery_attempts
           (delivery_id, workspace_slug, subscription_id, attempt, receiver, outcome, http_status, error, duration_ms,
            recorded_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          delivery.id,
          delivery.workspace_slug,
          delivery.subscription_id,
          attempt,
          outcome.receiver,
          outcome.kind === 'rejected' ? 'rejected' : outcome.kind,
          outcome.kind === 'rejected' ? null : outcome.httpStatus,
          outcome.error,
          outcome.kind === 'rejected' ? null : outcome.durationMs,
          now,
        ],
      );
      const sent = outcome.kind !== 'rejected';
      await tx.query(
        `UPDATE webhooks.deliveries SET
           status = $3, leased = false, updated_at = now(),
           next_attempt_at = CASE WHEN $4::double precision IS NULL THEN NULL
                                  ELSE $10::timestamptz + make_interval(secs => $4::double precision / 1000) END,
           completed_at = CASE WHEN $3 = 'retrying' THEN NULL ELSE now() END,
           http_status = $5, last_error = $6,
           request_headers = CASE WHEN $7 THEN $8::jsonb ELSE request_headers END,
           response_body = CASE WHEN $7 THEN $9 ELSE response_body END
         WHERE id = $1 AND attempt_count = $2 AND status = 'retrying'`,
        [
          delivery.id,
          attempt,
          status,
          delayMs,
          sent ? outcome.httpStatus : null,
          outcome.error,
          sent,
          sent ? JSON.stringify(outcome.requestHeaders) : null,
          sent ? outcome.responseBody : null,
          now,
        ],
      );
      if (outcome.kind === 'failure')
        await this.circuits.afterFailure(tx, { workspace: delivery.workspace_slug, receiver: outcome.receiver }, now);
    });
  }
}
