import { createHash } from 'node:crypto';
import { StrataException } from '../errors/strata.exception.js';

const KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * The shared rules of an `Idempotency-Key` header, whatever a service stores
 * for it: the key's form (400), the fingerprint of the request it was first
 * used with, and the 422 for reusing it with another request.
 */
export const IdempotencyKeys = {
  check(key: string): void {
    if (!KEY.test(key)) {
      throw StrataException.validation([
        { field: 'Idempotency-Key', message: 'must be 1 to 255 visible ASCII characters' },
      ]);
    }
  },

  /** SHA-256 of the request in a canonical text form (the caller makes it canonical). */
  fingerprint(canonicalRequest: string): string {
    return createHash('sha256').update(canonicalRequest).digest('hex');
  },

  reused(): StrataException {
    return StrataException.unprocessable('This Idempotency-Key was used for a different request');
  },
} as const;
