/** The spec's delivery states. */
export const DELIVERY_STATUSES = ['success', 'failed', 'retrying'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** A delivery row as stored. */
export interface DeliveryRow {
  id: string;
  workspace_slug: string;
  subscription_id: string;
  event_id: string | null;
  event: string;
  record_slug: string | null;
  is_test: boolean;
  replayed_from: string | null;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date | null;
  leased: boolean;
  http_status: number | null;
  last_error: string | null;
  request_body: string;
  request_headers: Record<string, string> | null;
  response_body: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

/** A row of `webhooks.delivery_attempts`. */
export interface AttemptRow {
  attempt: number;
  outcome: 'success' | 'failure' | 'rejected' | 'interrupted';
  http_status: number | null;
  error: string | null;
  duration_ms: number | null;
  recorded_at: Date;
}

/** A delivery in lists: no request payload, no response body. */
export interface DeliverySummary {
  id: string;
  subscriptionId: string;
  event: string;
  recordSlug: string | null;
  status: DeliveryStatus;
  httpStatus: number | null;
  lastError: string | null;
  attemptCount: number;
  /** When the next attempt is due while `retrying`, else null. */
  nextAttemptAt: string | null;
  replayedFrom: string | null;
  isTest: boolean;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
}

export interface DeliveryAttempt {
  attempt: number;
  /** `success`, `failure` (answered non-2xx or no answer), `rejected` (open circuit, not sent), `interrupted` (the replica stopped mid-attempt). */
  outcome: AttemptRow['outcome'];
  httpStatus: number | null;
  error: string | null;
  durationMs: number | null;
  at: string;
}

/** A delivery's detail: the body and headers last sent, the receiver's (truncated) answer, and every attempt. */
export interface DeliveryDetail extends DeliverySummary {
  requestPayload: unknown;
  requestHeaders: Record<string, string> | null;
  responseBody: string | null;
  attempts: DeliveryAttempt[];
}

/** Columns of the summary, for list queries (the body columns stay in the table). */
export const SUMMARY_COLUMNS = `id, workspace_slug, subscription_id, event, record_slug, is_test, replayed_from, status,
  attempt_count, next_attempt_at, http_status, last_error, created_at, updated_at, completed_at`;

type SummaryRow = Omit<DeliveryRow, 'event_id' | 'leased' | 'request_body' | 'request_headers' | 'response_body'>;

export function toSummary(row: SummaryRow): DeliverySummary {
  return {
    id: row.id,
    subscriptionId: row.subscription_id,
    event: row.event,
    recordSlug: row.record_slug,
    status: row.status,
    httpStatus: row.http_status,
    lastError: row.last_error,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.status === 'retrying' && row.next_attempt_at ? row.next_attempt_at.toISOString() : null,
    replayedFrom: row.replayed_from,
    isTest: row.is_test,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? null,
  };
}

export function toDetail(row: DeliveryRow, attempts: AttemptRow[]): DeliveryDetail {
  return {
    ...toSummary(row),
    requestPayload: JSON.parse(row.request_body) as unknown,
    requestHeaders: row.request_headers,
    responseBody: row.response_body,
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      outcome: a.outcome,
      httpStatus: a.http_status,
      error: a.error,
      durationMs: a.duration_ms,
      at: a.recorded_at.toISOString(),
    })),
  };
}
