import type {
  EventRecord,
  RecordEvent,
  WebhookBody,
  WebhookEvent,
  WebhookRecordBody,
  WebhookTestBody,
} from '@strata/contracts';

/**
 * The body a record event is delivered with, or undefined for events no
 * subscription can name (restored, reverted, expired, bulk updates and deletes,
 * failures, collection migrations).
 */
export function bodyOfEvent(event: RecordEvent): WebhookBody | undefined {
  switch (event.event) {
    case 'record_created':
      return { ...recordBody(event, event.data), event: event.event, createdBy: event.createdBy };
    case 'record_updated':
      return { ...recordBody(event, event.data.after), event: event.event, updatedBy: event.updatedBy };
    case 'record_deleted':
      return { ...recordBody(event, event.data), event: event.event, deletedBy: event.deletedBy };
    case 'records_bulk_created':
      return { ...event, event: event.event };
    case 'record_restored':
    case 'record_reverted':
    case 'record_expired':
    case 'records_bulk_updated':
    case 'records_bulk_deleted':
    case 'record_created_failed':
    case 'record_updated_failed':
    case 'record_deleted_failed':
    case 'records_bulk_created_failed':
    case 'records_bulk_updated_failed':
    case 'records_bulk_deleted_failed':
    case 'collection_migration_started':
    case 'collection_migration_progress':
    case 'collection_migration_finished':
      return undefined;
  }
}

/** The body of a test delivery: the caller's payload under `data`, flagged `isTest`. */
export function testBody(
  event: WebhookEvent,
  workspaceSlug: string,
  payload: Record<string, unknown>,
  now = new Date(),
): WebhookTestBody {
  return { event, workspaceSlug, data: payload, timestamp: now.toISOString(), isTest: true };
}

type RecordBodyBase = Omit<WebhookRecordBody, 'event' | 'createdBy' | 'updatedBy' | 'deletedBy'>;

function recordBody(
  event: { workspaceSlug: string; recordSlug: string; recordId: string; timestamp: string },
  record: EventRecord,
): RecordBodyBase {
  return {
    workspaceSlug: event.workspaceSlug,
    recordSlug: event.recordSlug,
    recordId: event.recordId,
    data: { id: record.id, recordSlug: record.recordSlug, data: record.data },
    timestamp: event.timestamp,
  };
}
