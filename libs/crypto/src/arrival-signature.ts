import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { constantTimeEqual } from './compare.js';

export type SignatureScheme = 'standard-webhooks' | 'hmac-sha256';

export interface ArrivalVerdict {
  readonly result: 'verified' | 'rejected' | 'unsigned';
  readonly scheme?: SignatureScheme;
  /** Why a signature was rejected (kept for the operator; never the expected value). */
  readonly reason?: string;
  /**
   * The 32 bytes of a verified plain HMAC-SHA256: what a replay check keys on, since the
   * header may spell the same bytes many ways (hex of either case, base64, `sha256=` or not).
   */
  readonly mac?: Buffer;
}

export interface ArrivalSignatureCheck {
  /** The trigger's validateSignature. */
  readonly validate: boolean;
  /** The trigger's signing secret in the clear, or null when it has none. */
  readonly secret: string | null;
  /** The trigger's signatureHeaderName, lower case (the plain HMAC scheme's header). */
  readonly headerName: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  readonly nowSeconds: number;
  readonly toleranceSeconds: number;
}

const STANDARD_WEBHOOKS_PREFIX = 'whsec_';

/**
 * Checks an http-trigger arrival's signature, by the scheme the request uses:
 *
 * - **Standard Webhooks** when it carries `webhook-id`, `webhook-timestamp` and
 *   `webhook-signature`: HMAC-SHA256 over `{id}.{timestamp}.{raw body}` with the
 *   secret (after `whsec_`, base64-decoded; any other secret as its UTF-8 bytes),
 *   a timestamp within the tolerance, any `v1,<base64>` entry matching;
 * - otherwise **plain HMAC-SHA256** of the raw body with the secret's UTF-8 bytes,
 *   in the trigger's `signatureHeaderName`, as hex or base64, optionally
 *   `sha256=`-prefixed (GitHub's `x-hub-signature-256` form).
 *
 * Every comparison is constant-time. A trigger that does not validate answers
 * `unsigned` whatever the request carries.
 */
export function checkArrivalSignature(c: ArrivalSignatureCheck): ArrivalVerdict {
  if (!c.validate) return { result: 'unsigned' };
  if (c.secret === null) return { result: 'rejected', reason: 'the trigger has no signing secret' };
  const id = header(c.headers, 'webhook-id');
  const timestamp = header(c.headers, 'webhook-timestamp');
  const signature = header(c.headers, 'webhook-signature');
  if (id !== undefined && timestamp !== undefined && signature !== undefined) {
    return { scheme: 'standard-webhooks', ...standardWebhooks(c, id, timestamp, signature) };
  }
  return { scheme: 'hmac-sha256', ...plainHmac(c) };
}

function standardWebhooks(
  c: ArrivalSignatureCheck,
  id: string,
  timestamp: string,
  signature: string,
): Pick<ArrivalVerdict, 'result' | 'reason'> {
  if (!/^\d{1,12}$/.test(timestamp)) return { result: 'rejected', reason: 'webhook-timestamp is not Unix seconds' };
  if (Math.abs(c.nowSeconds - Number(timestamp)) > c.toleranceSeconds) {
    return { result: 'rejected', reason: `webhook-timestamp is more than ${c.toleranceSeconds} s from now` };
  }
  const secret = c.secret!;
  const key = secret.startsWith(STANDARD_WEBHOOKS_PREFIX)
    ? Buffer.from(secret.slice(STANDARD_WEBHOOKS_PREFIX.length), 'base64')
    : Buffer.from(secret, 'utf8');
  const expected = `v1,${createHmac('sha256', key)
    .update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), c.body]))
    .digest('base64')}`;
  // Every v1 entry is compared (no early exit): the time does not tell which one matched.
  let matched = false;
  for (const entry of signature.split(' ')) {
    if (entry.startsWith('v1,')) matched = constantTimeEqual(entry, expected) || matched;
  }
  return matched ? { result: 'verified' } : { result: 'rejected', reason: 'no webhook-signature entry matches' };
}

function plainHmac(c: ArrivalSignatureCheck): Pick<ArrivalVerdict, 'result' | 'reason' | 'mac'> {
  const presented = header(c.headers, c.headerName);
  if (presented === undefined || presented === '') {
    return { result: 'rejected', reason: `${c.headerName} is missing` };
  }
  const digest = decodeDigest(presented);
  if (!digest) return { result: 'rejected', reason: `${c.headerName} is not a hex or base64 HMAC-SHA256` };
  const expected = createHmac('sha256', c.secret!).update(c.body).digest();
  return timingSafeEqual(digest, expected)
    ? { result: 'verified', mac: expected }
    : { result: 'rejected', reason: `${c.headerName} does not match` };
}

/**
 * The key a verified plain HMAC-SHA256 arrival claims so that it is taken once within the
 * replay window: `hmac-sha256:` and the SHA-256 (hex) of the verified MAC bytes, so every
 * spelling of one signature is one key, and the stored key cannot be sent back as a
 * signature. Null for any other verdict: Standard Webhooks deliveries are deduplicated by
 * their `webhook-id` (`deliveryIdOf`), and an unverified signature may claim nothing (a
 * forged one could shut out the sender's).
 */
export function signatureClaimOf(verdict: ArrivalVerdict): string | null {
  if (verdict.result !== 'verified' || verdict.scheme !== 'hmac-sha256' || !verdict.mac) return null;
  return `hmac-sha256:${createHash('sha256').update(verdict.mac).digest('hex')}`;
}

/** The 32 bytes of a presented HMAC-SHA256 (hex or base64, `sha256=` optional), or undefined. */
function decodeDigest(value: string): Buffer | undefined {
  const text = value.trim().replace(/^sha256=/i, '');
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  if (/^[A-Za-z0-9+/]{43}=$/.test(text) || /^[A-Za-z0-9_-]{43}$/.test(text)) {
    const bytes = Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64');
    return bytes.length === 32 ? bytes : undefined;
  }
  return undefined;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
