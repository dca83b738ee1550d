import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Compares two strings in time that does not depend on where they differ. */
export function constantTimeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const x = Buffer.isBuffer(a) ? a : Buffer.from(a, 'utf8');
  const y = Buffer.isBuffer(b) ? b : Buffer.from(b, 'utf8');
  // Compare digests so that unequal lengths take the same time as equal ones.
  const dx = createHash('sha256').update(x).digest();
  const dy = createHash('sha256').update(y).digest();
  return timingSafeEqual(dx, dy) && x.length === y.length;
}

export function hmacSha256(key: string | Buffer, data: string | Buffer): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/**
 * Hash of a high-entropy machine secret (client secrets, publishable keys).
 * These are 256-bit random values, so a fast hash is as strong as a slow one
 * and keeps the token endpoint cheap; passwords use {@link hashPassword}.
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
