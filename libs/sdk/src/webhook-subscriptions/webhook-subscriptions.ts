import { Resource, segment, type CallOptions, type JsonObject } from '../http/resource.js';
import type {
  DeliveryDetail,
  DeliveryList,
  DeliveryListQuery,
  RecordEvent,
  SubscriptionHealth,
  WebhookSubscription,
  WebhookSubscriptionInput,
} from './types.js';

const BASE = '/webhook-subscriptions';

/** `{data_base}/webhook-subscriptions`: outbound webhooks of record events, and their deliveries. */
export class WebhookSubscriptions extends Resource {
  /** The answer carries `secret`, once. */
  create(
    input: WebhookSubscriptionInput,
    options?: CallOptions & { idempotencyKey?: string },
  ): Promise<WebhookSubscription> {
    return this.call('POST', BASE, { body: input, idempotencyKey: options?.idempotencyKey, signal: options?.signal });
  }

  list(options?: CallOptions): Promise<{ data: WebhookSubscription[] }> {
    return this.read(BASE, undefined, options);
  }

  /** Any of name, url, events, recordSlugs (`[]` clears the filter), active. */
  update(id: string, input: Partial<WebhookSubscriptionInput>, options?: CallOptions): Promise<WebhookSubscription> {
    return this.call('PATCH', `${BASE}/${segment(id)}`, { body: input, signal: options?.signal });
  }

  async delete(id: string, options?: CallOptions): Promise<void> {
    await this.call('DELETE', `${BASE}/${segment(id)}`, { signal: options?.signal });
  }

  /** A new `secret`, answered once; the previous one stays valid for the grace period. */
  rotateSecret(id: string, options?: CallOptions): Promise<WebhookSubscription> {
    return this.call('POST', `${BASE}/${segment(id)}/rotate-secret`, { signal: options?.signal });
  }

  /** Sends a synthetic delivery through the normal pipeline; answers it once attempt 1 has ended. */
  test(id: string, input: { event: RecordEvent; payload: JsonObject }, options?: CallOptions): Promise<DeliveryDetail> {
    return this.call('POST', `${BASE}/${segment(id)}/test`, { body: input, signal: options?.signal });
  }

  health(id: string, options?: CallOptions): Promise<SubscriptionHealth> {
    return this.read(`${BASE}/${segment(id)}/health`, undefined, options);
  }

  deliveries(id: string, query: DeliveryListQuery = {}, options?: CallOptions): Promise<DeliveryList> {
    return this.read(`${BASE}/${segment(id)}/deliveries`, { ...query }, options);
  }

  delivery(id: string, deliveryId: string, options?: CallOptions): Promise<DeliveryDetail> {
    return this.read(`${BASE}/${segment(id)}/deliveries/${segment(deliveryId)}`, undefined, options);
  }

  /** Every subscription's deliveries, newest first. */
  recentDeliveries(query: DeliveryListQuery = {}, options?: CallOptions): Promise<DeliveryList> {
    return this.read(`${BASE}/deliveries/recent`, { ...query }, options);
  }

  failedDeliveries(query: Omit<DeliveryListQuery, 'status'> = {}, options?: CallOptions): Promise<DeliveryList> {
    return this.read(`${BASE}/deliveries/failed`, { ...query }, options);
  }

  /** Replays a delivery (scope `webhooks:replay`): a new delivery with `replayedFrom`. */
  replayDelivery(deliveryId: string, options?: CallOptions): Promise<DeliveryDetail> {
    return this.call('POST', `${BASE}/deliveries/${segment(deliveryId)}/retry`, { signal: options?.signal });
  }

  /** Stops a retrying delivery (scope `webhooks:cancel`). */
  cancelDelivery(deliveryId: string, options?: CallOptions): Promise<DeliveryDetail> {
    return this.call('POST', `${BASE}/deliveries/${segment(deliveryId)}/cancel`, { signal: options?.signal });
  }
}
