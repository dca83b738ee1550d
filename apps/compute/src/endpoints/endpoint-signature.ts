import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header carrying the signature of an hmac-mode endpoint call. */
export const SIGNATURE_HEADER = 'x-signature';
/** The header carrying the Unix time (seconds) the caller signed at. */
export const SIGNATURE_TIMESTAMP_HEADER = 'x-signature-timestamp';

/** What an hmac-mode call is signed over: everything a replayer or a proxy could change. */
export interface SignedRequest {
  /** The `x-signature-timestamp` header as sent: decimal Unix seconds. */
  readonly timestamp: string;
  /** Upper case, as sent. */
  readonly method: string;
  /** `/endpoints/{path}` and, when the URL has one, `?` and the query string exactly as sent. */
  readonly target: string;
  /** The body's bytes as received (empty when there is none). */
  readonly body: Buffer;
}

/** What a method may be in the signing input: an HTTP method's name (never a `.`). */
const METHOD = /^[A-Z][A-Z-]*$/;

/**
 * The signing input: `{timestamp}.{METHOD}.{byte length of target}:{target}.` followed by
 * the raw body. Binding the method and the target means a signature for one call cannot
 * be moved to another endpoint, method or query; the timestamp bounds replays. The
 * target's length (its UTF-8 bytes, in decimal) fixes where it ends: without it a target
 * ending in `.x` and a body `y` signed the same bytes as the target without `.x` and the
 * body `x.y`, so one signature covered two calls (before 2026-11-29). The timestamp is
 * digits and the method letters (checked here), so no field can take in the next one.
 */
export function signingInput(r: SignedRequest): Buffer {
  if (!/^\d+$/.test(r.timestamp)) throw new Error('the timestamp of a signing input must be decimal digits');
  if (!METHOD.test(r.method)) throw new Error('the method of a signing input must be an HTTP method name');
  const target = Buffer.from(r.target, 'utf8');
  return Buffer.concat([
    Buffer.from(`${r.timestamp}.${r.method}.${target.length}:`, 'utf8'),
    target,
    Buffer.from('.', 'utf8'),
    r.body,
  ]);
}

/** The signature as a caller sends it: `sha256=` and the lower-case hex HMAC-SHA256 of the signing input. */
export function signEndpointRequest(secret: string, r: SignedRequest): string {
  return `sha256=${createHmac('sha256', secret).update(signingInput(r)).digest('hex')}`;
}

/**
 * A verified signature carries its 32 bytes: what a replay check must key on, since the
 * header may spell the same bytes many ways (hex of either case, base64, with or without
 * `sha256=`).
 */
export type SignatureVerdict =
  { readonly ok: true; readonly mac: Buffer } | { readonly ok: false; readonly reason: string };

export interface SignatureCheck extends Omit<SignedRequest, 'timestamp'> {
  readonly secret: string;
  /** The headers as received (undefined when absent). */
  readonly signature: string | undefined;
  readonly timestamp: string | undefined;
  readonly now: Date;
  /** How far the timestamp may be from `now`, either way. */
  readonly toleranceSeconds: number;
}

const TIMESTAMP = /^\d{1,12}$/;
const HEX = /^[0-9a-fA-F]{64}$/;
const BASE64 = /^[A-Za-z0-9+/]{43}=?$|^[A-Za-z0-9_-]{43}$/;

/**
 * Checks an hmac-mode call: a timestamp within the tolerance of `now`, and a
 * signature (hex, or base64, with or without `sha256=`) equal to the expected
 * one, compared in constant time. The reason says what is wrong, never what
 * the right signature would have been.
 */
export function verifyEndpointSignature(c: SignatureCheck): SignatureVerdict {
  if (c.signature === undefined || c.signature === '') return { ok: false, reason: `${SIGNATURE_HEADER} is missing` };
  if (c.timestamp === undefined || !TIMESTAMP.test(c.timestamp)) {
    return { ok: false, reason: `${SIGNATURE_TIMESTAMP_HEADER} must be the Unix time in seconds` };
  }
  const skew = Math.abs(Number(c.timestamp) - Math.floor(c.now.getTime() / 1000));
  if (!(skew <= c.toleranceSeconds)) {
    return { ok: false, reason: `${SIGNATURE_TIMESTAMP_HEADER} is more than ${c.toleranceSeconds} s from now` };
  }
  const presented = decodeSignature(c.signature);
  if (!presented) return { ok: false, reason: `${SIGNATURE_HEADER} must be sha256=<hex> (or base64) HMAC-SHA256` };
  if (!METHOD.test(c.method)) return { ok: false, reason: 'the method cannot be signed' };
  const expected = createHmac('sha256', c.secret)
    .update(signingInput({ timestamp: c.timestamp, method: c.method, target: c.target, body: c.body }))
    .digest();
  return timingSafeEqual(presented, expected)
    ? { ok: true, mac: expected }
    : { ok: false, reason: 'the signature does not match' };
}

/** The 32 bytes of a presented signature, or undefined when it is not one. */
function decodeSignature(header: string): Buffer | undefined {
  const value = header.trim().replace(/^sha256=/i, '');
  if (HEX.test(value)) return Buffer.from(value, 'hex');
  if (BASE64.test(value)) {
    const bytes = Buffer.from(value, value.includes('-') || value.includes('_') ? 'base64url' : 'base64');
    return bytes.length === 32 ? bytes : undefined;
  }
  return undefined;
}
