import type { Principal } from './principal.js';

interface Entry {
  readonly principal: Principal;
  /** Epoch milliseconds: the earlier of the token's `exp` and the end of the caching time. */
  readonly until: number;
}

const MAX_ENTRIES = 10_000;

/**
 * Bearer tokens this replica verified recently, with the principal each one
 * proved. A token is the same string on every request of a client, and its
 * signature check (ECDSA) was the largest cost of the request's guard chain.
 * An entry never outlives the token's `exp`, and lasts at most `ttlMs`: a
 * signing key withdrawn from the JWKS stops working within that time, like a
 * permission change (PERMISSION_CACHE_TTL_MS).
 */
export class VerifiedTokens {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly ttlMs: number) {}

  get(token: string, now = Date.now()): Principal | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (entry.until > now) return entry.principal;
    this.entries.delete(token);
    return undefined;
  }

  /** Remembers a verified token until `expiresAtSeconds` (its `exp`) or the caching time, whichever comes first. */
  set(token: string, principal: Principal, expiresAtSeconds: number, now = Date.now()): void {
    if (this.ttlMs <= 0) return;
    const until = Math.min(expiresAtSeconds * 1000, now + this.ttlMs);
    if (until <= now) return;
    if (this.entries.size >= MAX_ENTRIES) this.evict(now);
    this.entries.set(token, { principal, until });
  }

  private evict(now: number): void {
    for (const [token, entry] of this.entries) if (entry.until <= now) this.entries.delete(token);
    // Still full of live entries: drop the oldest (Map keeps insertion order).
    while (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }
}
