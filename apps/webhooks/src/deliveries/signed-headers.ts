import { WEBHOOK_HEADERS } from '@strata/contracts';
import { signWebhook } from '@strata/crypto';

export interface AttemptToSign {
  /** The delivery id: `webhook-id`, the same on every attempt. */
  readonly deliveryId: string;
  readonly event: string;
  /** 1-based attempt number. */
  readonly attempt: number;
  readonly isTest: boolean;
  /** The current secret first, then the previous one while its grace lasts. */
  readonly secrets: readonly string[];
  readonly body: string;
  readonly nowSeconds: number;
}

/**
 * The headers of one attempt: both families with identical values, the event
 * type, the attempt number from the second attempt on, and the test flag.
 */
export function signedHeaders(a: AttemptToSign): Record<string, string> {
  const timestamp = String(a.nowSeconds);
  const signature = signWebhook(a.secrets, a.deliveryId, timestamp, a.body);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'Strata-Webhooks/1' };
  for (const name of WEBHOOK_HEADERS.id) headers[name] = a.deliveryId;
  for (const name of WEBHOOK_HEADERS.timestamp) headers[name] = timestamp;
  for (const name of WEBHOOK_HEADERS.signature) headers[name] = signature;
  headers[WEBHOOK_HEADERS.eventType] = a.event;
  if (a.attempt > 1) headers[WEBHOOK_HEADERS.retryAttempt] = String(a.attempt);
  if (a.isTest) headers[WEBHOOK_HEADERS.testEvent] = 'true';
  return headers;
}
