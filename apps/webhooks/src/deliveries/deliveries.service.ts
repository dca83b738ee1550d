import { Injectable } from '@nestjs/common';
import { newUuid } from '@strata/crypto';
import { Transactions, type WorkspaceScope } from '@strata/db';
import { Clock, StrataException } from '@strata/platform';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository.js';
import { DeliveriesRepository } from './deliveries.repository.js';
import { testBody } from './delivery-body.js';
import { DeliveryDispatcher } from './delivery-dispatcher.js';
import { DeliveryStore } from './delivery-store.repository.js';
import { toDetail, toSummary, type DeliveryDetail, type DeliverySummary } from './delivery.js';
import { DEFAULT_DELIVERY_LIMIT, type ListDeliveriesQuery, type TestDeliveryRequest } from './dto/delivery.requests.js';

export interface DeliveryPage {
  data: DeliverySummary[];
  pagination: { limit: number; offset: number; hasMore: boolean };
}

export const CANCELLED_BY_USER = 'Cancelled by user';

const subscriptionNotFound = (id: string) => StrataException.notFound(`Webhook subscription ${id} not found`);
const deliveryNotFound = (id: string) => StrataException.notFound(`Webhook delivery ${id} not found`);

/** Delivery inspection, replay, cancel and test sends within the caller's workspace. */
@Injectable()
export class DeliveriesService {
  constructor(
    private readonly transactions: Transactions,
    private readonly deliveries: DeliveriesRepository,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly store: DeliveryStore,
    private readonly dispatcher: DeliveryDispatcher,
    private readonly clock: Clock,
  ) {}

  /** A page of deliveries, newest first: of one subscription, or of the whole workspace. */
  async list(scope: WorkspaceScope, query: ListDeliveriesQuery, subscriptionId?: string): Promise<DeliveryPage> {
    if (subscriptionId && !(await this.subscriptions.find(scope, subscriptionId))) {
      throw subscriptionNotFound(subscriptionId);
    }
    const limit = query.limit ?? DEFAULT_DELIVERY_LIMIT;
    const offset = query.offset ?? 0;
    const rows = await this.deliveries.list(scope, {
      subscriptionId,
      status: query.status,
      since: query.since,
      until: query.until,
      limit: limit + 1,
      offset,
    });
    return {
      data: rows.slice(0, limit).map(toSummary),
      pagination: { limit, offset, hasMore: rows.length > limit },
    };
  }

  /** A delivery with the body and headers last sent, the receiver's answer and its attempts. */
  async get(scope: WorkspaceScope, deliveryId: string, subscriptionId?: string): Promise<DeliveryDetail> {
    const found = await this.deliveries.withAttempts(scope, deliveryId, subscriptionId);
    if (!found) throw deliveryNotFound(deliveryId);
    return toDetail(found.row, found.attempts);
  }

  /**
   * A test delivery through the normal pipeline: signed, sent at once (attempt 1,
   * with `Svc-Test-Event: true`), retried on the normal schedule when it fails.
   * Answers the row after the first attempt.
   */
  async test(scope: WorkspaceScope, subscriptionId: string, request: TestDeliveryRequest): Promise<DeliveryDetail> {
    const { event } = request;
    const claim = await this.transactions.run(async (tx) => {
      // The previous secret only while its grace lasts, on the service's clock as in claims.
      const sub = await this.subscriptions.findForSigning(scope, tx, subscriptionId, this.clock.now());
      if (!sub) throw subscriptionNotFound(subscriptionId);
      if (!sub.active) throw StrataException.conflict(`Webhook subscription ${subscriptionId} is inactive`);
      const delivery = await this.store.insert(scope, tx, {
        id: newUuid(),
        subscriptionId,
        event,
        recordSlug: null,
        body: JSON.stringify(testBody(event, scope.workspace, request.payload)),
        isTest: true,
        replayedFrom: null,
        claimed: true,
      });
      return { delivery, url: sub.url, sealedSecret: sub.secret, sealedPreviousSecret: sub.sealed_previous_secret };
    });
    await this.dispatcher.attempt(claim);
    return this.get(scope, claim.delivery.id);
  }

  /**
   * Replays a finished delivery: a new delivery with `replayedFrom`, the stored
   * body, freshly signed headers and the normal schedule. 409 while the original
   * is retrying, or when its subscription is deleted or inactive.
   */
  async replay(scope: WorkspaceScope, deliveryId: string): Promise<DeliverySummary> {
    const replayed = await this.transactions.run(async (tx) => {
      const original = await this.deliveries.find(scope, deliveryId, { tx });
      if (!original) throw deliveryNotFound(deliveryId);
      if (original.status === 'retrying')
        throw StrataException.conflict(
          `Webhook delivery ${deliveryId} is still retrying; cancel it or wait for it to end`,
        );
      const sub = await this.subscriptions.find(scope, original.subscription_id, {
        tx,
        includeDeleted: true,
        lock: 'share',
      });
      if (!sub || sub.deleted_at)
        throw StrataException.conflict(`The subscription of webhook delivery ${deliveryId} is deleted`);
      if (!sub.active) throw StrataException.conflict(`The subscription of webhook delivery ${deliveryId} is inactive`);
      return this.store.insert(scope, tx, {
        id: newUuid(),
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
  async cancel(scope: WorkspaceScope, deliveryId: string): Promise<DeliverySummary> {
    const cancelled = await this.deliveries.cancel(scope, deliveryId, CANCELLED_BY_USER);
    if (cancelled) return toSummary(cancelled);
    const existing = await this.deliveries.find(scope, deliveryId);
    if (!existing) throw deliveryNotFound(deliveryId);
    throw StrataException.conflict(
      `Webhook delivery ${deliveryId} is ${existing.status}; only a retrying delivery can be cancelled`,
    );
  }
}
