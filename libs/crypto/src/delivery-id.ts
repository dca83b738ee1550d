import { createHash } from 'node:crypto';

/** Longer delivery ids are kept as their SHA-256, so the index stays small whatever a sender sends. */
const MAX_DELIVERY_ID = 200;

/**
 * A verified Standard Webhooks arrival's `webhook-id`: the delivery a provider's
 * retries share (inbound capture and orchestration webhooks dedupe on it); null for
 * another scheme. Only a verified arrival's id may be trusted: a forged one could
 * shut out the provider's.
 */
export function deliveryIdOf(scheme: string | undefined, header: string | string[] | undefined): string | null {
  if (scheme !== 'standard-webhooks' || typeof header !== 'string' || header.length === 0) return null;
  return header.length <= MAX_DELIVERY_ID ? header : `sha256:${createHash('sha256').update(header).digest('hex')}`;
}
