import { StrataException } from '@strata/platform';

/**
 * A record's expiry from `ttlSeconds` or `expiresAt` (one of them; a past
 * `expiresAt` is refused), counted from `now` (epoch ms on the service's clock).
 * `null` clears the expiry; undefined leaves it as is.
 */
export function expiryOf(
  body: { ttlSeconds?: number | undefined; expiresAt?: string | null | undefined },
  now: number,
): Date | null | undefined {
  if (body.ttlSeconds !== undefined && body.expiresAt !== undefined) {
    throw StrataException.validation([
      { field: 'expiresAt', message: 'give either ttlSeconds or expiresAt, not both' },
    ]);
  }
  if (body.ttlSeconds !== undefined) return new Date(now + body.ttlSeconds * 1000);
  if (body.expiresAt === null) return null;
  if (body.expiresAt === undefined) return undefined;
  const at = new Date(body.expiresAt);
  if (at.getTime() <= now) throw StrataException.validation([{ field: 'expiresAt', message: 'must be in the future' }]);
  return at;
}
