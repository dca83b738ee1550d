/** The record events a subscription may name (the spec's "Webhook subscription"). */
export const WEBHOOK_EVENTS = ['record_created', 'record_updated', 'record_deleted', 'records_bulk_created'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
