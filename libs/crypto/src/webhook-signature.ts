import { randomBytes } from 'node:crypto';
import { constantTimeEqual, hmacSha256 } from './compare.js';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com), as the spec's
 * "Outbound webhook request" describes them: the signed content is
 * `${id}.${timestamp}.${raw body}`, the HMAC-SHA256 key is the secret after
 * `whsec_` decoded from base64 (either alphabet), and a header value is one or
 * more `v1,<base64 digest>` separated by spaces.
 */

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** Receivers reject timestamps further than this from their clock. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/**
 * A new subscription secret: `whsec_` + base64 of 33 random bytes (44
 * characters, no padding), drawn until it holds no `+` or `/` (about four
 * draws; about 260 bits are left). The spec tells receivers to base64url-decode
 * the part after `whsec_` and the vectors to base64-decode it: such a secret
 * decodes to the same key both ways.
 */
export function generateWebhookSecret(): string {
  for (;;) {
    const encoded = randomBytes(33).toString('base64');
    if (!/[+/]/.test(encoded)) return `${WEBHOOK_SECRET_PREFIX}${encoded}`;
  }
}

function keyOf(secret: string): Buffer {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) throw new Error('a webhook secret starts with whsec_');
  const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64');
  if (key.length === 0) throw new Error('a webhook secret holds a key after whsec_');
  return key;
}

/** `v1,<base64>` for one secret. */
export function webhookSignature(secret: string, id: string, timestamp: number | string, body: string): string {
  return `v1,${hmacSha256(keyOf(secret), `${id}.${timestamp}.${body}`).toString('base64')}`;
}

/** The signature header for every secret given (during a rotation: the new one, then the previous one). */
export function signWebhook(secrets: readonly string[], id: string, timestamp: number | string, body: string): string {
  if (secrets.length === 0) throw new Error('at least one secret signs a webhook');
  return secrets.map((s) => webhookSignature(s, id, timestamp, body)).join(' ');
}

export type WebhookVerification = { valid: true } | { valid: false; reason: string };

/**
 * Verifies a signed request as a receiver does: the timestamp within the
 * tolerance, then any `v1` entry of the header equal (in constant time) to the
 * expected signature; entries of other versions are skipped.
 */
export function verifyWebhook(
  secret: string,
  headers: { id: string; timestamp: string; signature: string },
  body: string,
  nowSeconds = Math.floor(Date.now() / 1000),
  toleranceSeconds = WEBHOOK_TOLERANCE_SECONDS,
): WebhookVerification {
  const ts = Number(headers.timestamp);
  if (!/^\d{1,12}$/.test(headers.timestamp) || !Number.isSafeInteger(ts))
    return { valid: false, reason: 'invalid timestamp' };
  if (Math.abs(nowSeconds - ts) > toleranceSeconds) return { valid: false, reason: 'timestamp outside the tolerance' };
  const expected = webhookSignature(secret, headers.id, headers.timestamp, body);
  const entries = headers.signature.split(' ').filter((e) => e.startsWith('v1,'));
  // Compare with every entry (no early exit), so the time does not tell which one matched.
  let matched = false;
  for (const entry of entries) matched = constantTimeEqual(entry, expected) || matched;
  return matched ? { valid: true } : { valid: false, reason: 'no matching signature' };
}
