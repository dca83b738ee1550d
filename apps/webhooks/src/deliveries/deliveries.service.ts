import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { newUuid } from '@strata/crypto';
import { rowsOf } from '@strata/db';
import { Clock, StrataException } from '@strata/platform';
import type { SubscriptionRow } from '../subscriptions/subscription.js';
import { testBody } from './delivery-body.js';
import { DeliveryDispatcher } from './delivery-dispatcher.js';
import { DeliveryStore } from './delivery-store.js';
import {
  SUMMARY_COLUMNS,
  toDetail,
  toSummary,
  type AttemptRow,
  type DeliveryDetail,
  type DeliveryRow,
  type DeliverySummary,
} from './delivery.js';
import { DEFAULT_DELIVERY_LIMIT, type ListDeliveriesQuery, type TestDeliveryRequest } from './dto/delivery.requests.js';

export interface DeliveryPage {
  data: DeliverySummary[];
  pagination: { limit: number; offset: number; hasMore: boolean };
}

export const CANCELLED_BY_USER = 'Cancelled by user';

const subscriptionNotFound = (id: string) => StrataException.notFound(`Webhook subscription ${id} not found`);
const deliveryNotFound = (id: string) => StrataException.notFound(`Webhook delivery ${id} not found`);

/** Delivery inspection, replay, cancel and test sends; every query is scoped to the caller's workspace. */
@Injectable()
export class DeliveriesService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly store: DeliveryStore,
    private readonly dispatcher: DeliveryDispatcher,
    private readonly clock: Clock,
  ) {}

  /** A page of deliveries, newest first: of one subscription, or of the whole workspace. */
  async list(workspace: string, query: ListDeliveriesQuery, subscriptionId?: string): Promise<DeliveryPage> {
    if (subscriptionId) await this.mustExist(workspace, subscriptionId);
    const limit = query.limit ?? DEFAULT_DELIVERY_LIMIT;
    const offset = query.offset ?? 0;
    const rows = await this.db.query<DeliveryRow[]>(
      `SELECT ${SUMMARY_COLUMNS} FROM webhooks.deliveries
        WHERE workspace_slug = $1 AND ($2::uuid IS NULL OR subscription_id = $2)
          AND ($3::text IS NULL OR status = $3)
          AND ($4::timestamptz IS NULL OR created_at >= $4) AND ($5::timestamptz IS NULL OR created_at < $5)
        ORDER BY created_at DESC, id DESC LIMIT $6 OFFSET $7`,
      [
        workspace,
        subscriptionId ?? null,
        query.status ?? null,
        query.since ?? null,
        query.until ?? null,
        limit + 1,
        offset,
      ],
    );
    return {
      data: rows.slice(0, limit).map(toSummary),
      pagination: { limit, offset, hasMore: rows.length > limit },
    };
  }

  /** A delivery with the body and headers last sent, the receiver's answer and its attempts. */
  async get(workspace: string, deliveryId: string, subscriptionId?: string): Promise<DeliveryDetail> {
    const [row] = await this.db.query<DeliveryRow[]>(
      `SELECT * FROM webhooks.deliveries
        WHERE workspace_slug = $1 AND id = $2 AND ($3::uuid IS NULL OR subscription_id = $3)`,
      [workspace, deliveryId, subscriptionId ?? null],
    );
    if (!row) throw deliveryNotFound(deliveryId);
    const attempts = await this.db.query<AttemptRow[]>(
      `SELECT attempt, outcome, http_status, error, duration_ms, recorded_at FROM webhooks.delivery_attempts
        WHERE delivery_id = $1 ORDER BY attempt, id`,
      [row.id],
    );
    return toDetail(row, attempts);
  }

  /**
   * A test delivery through the normal pipeline: signed, sent at once (attempt 1,
   * with `Svc-Test-Event: true`), retried on the normal schedule when it fails.
   * Answers the row after the first attempt.
   */
  async test(workspace: string, subscriptionId: string, request: TestDeliveryRequest): Promise<DeliveryDetail> {
    const { event } = request;
    const claim = await this.db.transaction(async (tx) => {
      // The previous secret only while its grace lasts, on the service's clock as in claims.
      const [sub] = await tx.query<(SubscriptionRow & { sealed_previous_secret: string | null })[]>(
        `SELECT *, CASE WHEN previous_secret_valid_until > $3 THEN previous_secret END AS sealed_previous_secret
           FROM webhooks.subscriptions WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NULL FOR SHARE`,
        [workspace, subscriptionId, this.clock.now()],
      );
      if (!sub) throw subscriptionNotFound(subscriptionId);
      if (!sub.active) throw StrataException.conflict(`Webhook subscription ${subscriptionId} is inactive`);
      const delivery = await this.store.insert(tx, {
        id: newUuid(),
        workspace,
        subscriptionId,
        event,
        recordSlug: null,
        body: JSON.stringify(testBody(event, workspace, request.payload)),
        isTest: true,
        replayedFrom: null,
        claimed: true,
      });
      return { delivery, url: sub.url, sealedSecret: sub.secret, sealedPreviousSecret: sub.sealed_previous_secret };
    });
    await this.dispatcher.attempt(claim);
    return this.get(workspace, claim.delivery.id);
  }

  /**
   * Replays a finished delivery: a new delivery with `replayedFrom`, the stored
   * body, freshly signed headers and the normal schedule. 409 while the original
   * is retrying, or when its subscription is deleted or inactive.
   */
  async replay(workspace: string, deliveryId: string): Promise<DeliverySummary> {
    const replayed = await this.db.transaction(async (tx) => {
      const [original] = await tx.query<DeliveryRow[]>(
        'SELECT * FROM webhooks.deliveries WHERE workspace_slug = $1 AND id = $2 FOR SHARE',
        [workspace, deliveryId],
      );
      if (!original) throw deliveryNotFound(deliveryId);
      if (original.status === 'retrying')
        throw StrataException.conflict(
          `Webhook delivery ${deliveryId} is still retrying; cancel it or wait for it to end`,
        );
      const [sub] = await tx.query<SubscriptionRow[]>(
        'SELECT * FROM webhooks.subscriptions WHERE workspace_slug = $1 AND id = $2 FOR SHARE',
        [workspace, original.subscription_id],
      );
      if (!sub || sub.deleted_at)
        throw StrataException.conflict(`The subscription of webhook delivery ${deliveryId} is deleted`);
      if (!sub.active) throw StrataException.conflict(`The subscription of webhook delivery ${deliveryId} is inactive`);
      return this.store.insert(tx, {
        id: newUuid(),
        workspace,
        subscriptionId: original.subscription_id,
        event: original.event,
        recordSlug: original.record_slug,
        body: original.request_body,
        isTest: original.is_test,
        replayedFrom: original.id,
        claimed: false,
      });
    });
    this.dispatcher.wake();
    return toSummary(replayed);
  }

  /** Stops a retrying delivery: `failed` with lastError `Cancelled by user`. 409 when it is not retrying. */
  async cancel(workspace: string, deliveryId: string): Promise<DeliverySummary> {
    const rows = rowsOf<DeliveryRow>(
      await this.db.query(
        `UPDATE webhooks.deliveries SET status = 'failed', last_error = $3, next_attempt_at = NULL, leased = false,
                completed_at = now(), updated_at = now()
          WHERE workspace_slug = $1 AND id = $2 AND status = 'retrying' RETURNING ${SUMMARY_COLUMNS}`,
        [workspace, deliveryId, CANCELLED_BY_USER],
      ),
    );
    if (rows[0]) return toSummary(rows[0]);
    const [existing] = await this.db.query<{ status: string }[]>(
      'SELECT status FROM webhooks.deliveries WHERE workspace_slug = $1 AND id = $2',
      [workspace, deliveryId],
    );
    if (!existing) throw deliveryNotFound(deliveryId);
    throw StrataException.conflict(
      `Webhook delivery ${deliveryId} is ${existing.status}; only a retrying delivery can be cancelled`,
    );
  }

  /** 404 unless the subscription exists (not deleted) in the workspace. */
  private async mustExist(workspace: string, id: string): Promise<void> {
    const [sub] = await this.db.query<{ id: string }[]>(
      'SELECT id FROM webhooks.subscriptions WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NULL',
      [workspace, id],
    );
    if (!sub) throw subscriptionNotFound(id);
  }
}
