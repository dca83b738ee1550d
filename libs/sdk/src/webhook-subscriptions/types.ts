import type { JsonObject, JsonValue } from '../http/resource.js';

export type RecordEvent =
  'record_created' | 'record_updated' | 'record_deleted' | 'records_bulk_created' | (string & {});

export interface WebhookSubscription {
  readonly id: string;
  readonly name: string;
  readonly url: string;
  readonly events: RecordEvent[];
  /** Empty: every collection. */
  readonly recordSlugs: string[];
  readonly active: boolean;
  /** While a rotated-out secret still signs (24 h after a rotation), when it stops. */
  readonly previousSecretValidUntil: string | null;
  readonly createdBy: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** `whsec_…`: answered once, on create and on rotation. */
  readonly secret?: string;
}

export interface WebhookSubscriptionInput {
  readonly name: string;
  readonly url: string;
  readonly events: readonly RecordEvent[];
  /** Omitted: every collection. */
  readonly recordSlugs?: readonly string[];
  readonly active?: boolean;
}

export type DeliveryStatus = 'success' | 'failed' | 'retrying';

export interface Delivery {
  readonly id: string;
  readonly subscriptionId: string;
  readonly event: string;
  readonly recordSlug: string | null;
  readonly status: DeliveryStatus;
  readonly httpStatus: number | null;
  readonly lastError: string | null;
  readonly attemptCount: number;
  readonly nextAttemptAt: string | null;
  readonly replayedFrom: string | null;
  readonly isTest: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly completedAt: string | null;
}

export interface DeliveryDetail extends Delivery {
  readonly requestPayload: JsonValue;
  readonly requestHeaders: Record<string, string> | null;
  readonly responseBody: string | null;
  readonly attempts: {
    attempt: number;
    outcome: 'success' | 'failure' | 'rejected' | 'interrupted';
    httpStatus: number | null;
    error: string | null;
    durationMs: number;
    at: string;
  }[];
}

export interface DeliveryListQuery {
  readonly limit?: number;
  readonly offset?: number;
  readonly status?: DeliveryStatus;
  readonly since?: string;
  readonly until?: string;
}

export interface DeliveryList {
  readonly data: Delivery[];
  readonly pagination: { limit: number; offset: number; hasMore: boolean };
}

export interface SubscriptionHealth {
  readonly successRate1h: number | null;
  readonly successRate24h: number | null;
  readonly totalDeliveries1h: number;
  readonly totalDeliveries24h: number;
  readonly lastFailureAt: string | null;
  readonly lastFailureError: string | null;
}

export type TestPayload = JsonObject;
