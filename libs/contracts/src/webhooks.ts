import type { BulkRecordEvent } from './events.js';

/** The record events a webhook subscription may name (the spec's "Webhook subscription"). */
export const WEBHOOK_EVENTS = ['record_created', 'record_updated', 'record_deleted', 'records_bulk_created'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export function isWebhookEvent(value: string): value is WebhookEvent {
  return (WEBHOOK_EVENTS as readonly string[]).includes(value);
}

/**
 * Body of a delivery for record_created, record_updated and record_deleted (the
 * spec's "Outbound webhook request"). `data.data` is the record's data: after the
 * change for an update, as it was before deletion for a delete. Secret fields are
 * masked, as in the event.
 */
export interface WebhookRecordBody {
  event: 'record_created' | 'record_updated' | 'record_deleted';
  workspaceSlug: string;
  recordSlug: string;
  recordId: string;
  data: { id: string; recordSlug: string; data: Record<string, unknown> };
  timestamp: string;
  createdBy?: string;
  updatedBy?: string;
  deletedBy?: string;
}

/** Body of a records_bulk_created delivery: the aggregate event as published (ids, no record data). */
export type WebhookBulkBody = BulkRecordEvent & { event: 'records_bulk_created' };

/** Body of a test delivery sent by `POST /webhook-subscriptions/{id}/test`. */
export interface WebhookTestBody {
  event: WebhookEvent;
  workspaceSlug: string;
  /** The `payload` object of the test request. */
  data: Record<string, unknown>;
  timestamp: string;
  isTest: true;
}

export type WebhookBody = WebhookRecordBody | WebhookBulkBody | WebhookTestBody;

/** Header names of a delivery: both families carry the same values. */
export const WEBHOOK_HEADERS = {
  id: ['webhook-id', 'Svc-Id'],
  timestamp: ['webhook-timestamp', 'Svc-Timestamp'],
  signature: ['webhook-signature', 'Svc-Signature'],
  eventType: 'Svc-Event-Type',
  retryAttempt: 'Svc-Retry-Attempt',
  testEvent: 'Svc-Test-Event',
} as const;
