import { createHmac, timingSafeEqual } from 'node:crypto';

/** The longest a signed link may last: 7 days, in seconds. */
export const MAX_LINK_SECONDS = 7 * 24 * 3600;

/** A signature's form: 32 bytes in base64url. */
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;

/** What a link's signature covers. */
export interface LinkClaims {
  readonly workspace: string;
  readonly fileId: string;
  /** Unix seconds after which the link is refused. */
  readonly expires: number;
}

/**
 * The signed text: a scheme name and each field length-prefixed, so that no two
 * claims give the same bytes.
 */
function signedText(c: LinkClaims): string {
  return ['strata-storage-link/1', c.workspace, c.fileId, String(c.expires)]
    .map((f) => `${Buffer.byteLength(f, 'utf8')}:${f},`)
    .join('');
}

/** The link's signature: base64url HMAC-SHA256 under the bucket's link key. Pure. */
export function signLink(key: Buffer, claims: LinkClaims): string {
  return createHmac('sha256', key).update(signedText(claims)).digest('base64url');
}

/**
 * Whether `signature` is the link key's for these claims and the link has not
 * expired at `nowSeconds`. The comparison takes the same time wherever the
 * signatures differ. Pure.
 */
export function linkValid(key: Buffer, claims: LinkClaims, signature: string, nowSeconds: number): boolean {
  // The shape says nothing of the key; compared as text, so no other spelling of the same bytes passes.
  if (!SIGNATURE.test(signature)) return false;
  const matches = timingSafeEqual(Buffer.from(signLink(key, claims), 'ascii'), Buffer.from(signature, 'ascii'));
  return matches && claims.expires > nowSeconds;
}
