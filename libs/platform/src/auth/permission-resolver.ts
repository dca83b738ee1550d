import { Injectable } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';
import { ErrorCode, type CollectionPermissions } from '@strata/contracts';
import { hashToken } from '@strata/crypto';
import { Clock } from '../clock/clock.js';
import { ServiceConfig } from '../config/service-config.js';
import { StrataException } from '../errors/strata.exception.js';
import type { Principal } from './principal.js';

export interface ResolvedPermissions {
  /** Held on everything the permission covers (every collection, for `records`). */
  readonly permissions: ReadonlySet<string>;
  /** The principal's name for people (a user's name or email, a service account's name), when known. */
  readonly displayName?: string;
  /** `records:<action>` held on the named collections only (docs/identity.md). */
  readonly collections: CollectionPermissions;
}

/**
 * Resolves the effective permissions of a principal in a workspace and confirms
 * the principal is still active (a revoked or deleted account is refused here,
 * well before its token expires). Throws 401 when it is not.
 */
export abstract class PermissionResolver {
  /**
   * `scope` is the URL's workspace, issued by the access guard for this check;
   * it reaches the handler only if the check passes.
   */
  abstract resolve(principal: Principal, scope: WorkspaceScope | undefined): Promise<ResolvedPermissions>;
}

/** Share of an entry's life after which a request starts its refresh (the last 20% of the TTL). */
const REFRESH_AFTER = 0.8;

interface CacheEntry {
  /** The lookup was sent at `expiresAt - ttl`: the answer is never used past this. */
  readonly expiresAt: number;
  /** From here until `expiresAt` the answer is still served while one background refresh runs. */
  readonly refreshAt: number;
  readonly value: Promise<ResolvedPermissions>;
  /** The background refresh under way, if any. */
  refresh?: Promise<ResolvedPermissions>;
  /** A refresh was started: one per entry, so a failing auth service is not asked again before expiry. */
  refreshStarted?: boolean;
}

/** Answer of `GET {auth_url}/workspace/{workspace}/api/v1/permissions/me`. */
export interface PermissionsResponse {
  workspace: string;
  principal: { type: string; id: string; groups: string[]; displayName?: string };
  permissions: string[];
  /**
   * Permissions held on some collections only: `records:<action>` → slugs. A
   * consumer that does not know this field sees them as not held (it refuses).
   */
  collectionPermissions: Record<string, string[]>;
}

/**
 * Asks the auth service, presenting the caller's own credential, and caches the
 * answer for `PERMISSION_CACHE_TTL_MS` so that a policy, membership or
 * revocation change takes effect within that time.
 *
 * Refresh ahead: in the last 20% of an entry's life, the first request to see it
 * starts one lookup in the background and every request is still answered from
 * the entry, so a busy principal's requests never wait for a lookup (nor fail
 * when one times out) while the entry lives. A request waits only once the entry
 * has expired (on the refresh under way, if there is one). Each answer is used at
 * most `PERMISSION_CACHE_TTL_MS` after its lookup was sent, so the bound holds.
 * A refresh refused (401, 403) drops the entry at once; one that fails otherwise
 * leaves it to expire, and the next request after that asks again.
 */
@Injectable()
export class HttpPermissionResolver extends PermissionResolver {
  private readonly cache = new Map<string, CacheEntry>();
  /** The credential's hash per principal: a verified token's principal is reused while it is cached. */
  private readonly credentialHashes = new WeakMap<Principal, string>();
  private readonly base: string;
  private readonly ttl: number;

  constructor(
    config: ServiceConfig,
    private readonly clock: Clock,
  ) {
    super();
    this.base = config.AUTH_INTERNAL_URL.replace(/\/$/, '');
    this.ttl = config.PERMISSION_CACHE_TTL_MS;
  }

  resolve(principal: Principal, scope: WorkspaceScope | undefined): Promise<ResolvedPermissions> {
    // Routes without a workspace exist only in the auth service, which resolves locally.
    if (scope === undefined) return Promise.resolve({ permissions: new Set<string>(), collections: {} });
    const workspace = scope.workspace;
    const key = `${workspace}\u0000${this.credentialHash(principal)}`;
    const now = this.clock.now().getTime();
    const hit = this.cache.get(key);
    if (hit) {
      if (hit.expiresAt > now) {
        if (now >= hit.refreshAt && hit.refreshStarted !== true) this.refreshAhead(key, hit, principal, workspace, now);
        return hit.value;
      }
      // Expired while its refresh is under way: that lookup was sent before now, within the bound.
      if (hit.refresh !== undefined) return hit.refresh;
    }
    const value = this.fetch(principal, workspace);
    this.cache.set(key, this.entry(now, value));
    value.catch(() => {
      if (this.cache.get(key)?.value === value) this.cache.delete(key);
    });
    if (this.cache.size > 10_000) this.evictExpired(now);
    return value;
  }

  private entry(sentAt: number, value: Promise<ResolvedPermissions>): CacheEntry {
    return { expiresAt: sentAt + this.ttl, refreshAt: sentAt + this.ttl * REFRESH_AFTER, value };
  }

  private refreshAhead(key: string, entry: CacheEntry, principal: Principal, workspace: string, sentAt: number): void {
    const refresh = this.fetch(principal, workspace);
    entry.refresh = refresh;
    entry.refreshStarted = true;
    refresh.then(
      () => {
        if (this.cache.get(key) === entry) this.cache.set(key, this.entry(sentAt, refresh));
      },
      (err: unknown) => {
        // Whoever waits on it after expiry gets the failure; the entry is not answered from again
        // once the credential is refused, and otherwise serves until it expires.
        entry.refresh = undefined;
        if (isRefusal(err) && this.cache.get(key) === entry) this.cache.delete(key);
      },
    );
  }

  private credentialHash(principal: Principal): string {
    let hash = this.credentialHashes.get(principal);
    if (hash === undefined) {
      hash = hashToken(principal.credential.kind === 'bearer' ? principal.credential.token : principal.credential.key);
      this.credentialHashes.set(principal, hash);
    }
    return hash;
  }

  private async fetch(principal: Principal, workspace: string): Promise<ResolvedPermissions> {
    const headers: Record<string, string> =
      principal.credential.kind === 'bearer'
        ? { authorization: `Bearer ${principal.credential.token}` }
        : { 'x-publishable-key': principal.credential.key };
    let res: Response;
    try {
      res = await fetch(`${this.base}/workspace/${encodeURIComponent(workspace)}/api/v1/permissions/me`, {
        headers,
        signal: AbortSignal.timeout(5000),
      });
    } catch {
      throw new StrataException(ErrorCode.UNAVAILABLE, 'The auth service cannot be reached to resolve permissions');
    }
    if (res.status === 401) throw StrataException.unauthorized('The credential is no longer valid');
    if (res.status === 403 || res.status === 404) {
      throw StrataException.forbidden('The credential has no access to this workspace', ErrorCode.WORKSPACE_MISMATCH);
    }
    if (res.status === 429) {
      // The workspace's lookups budget is spent: the caller is told when to come back, as for any limit.
      const retryAfter = res.headers.get('retry-after');
      throw new StrataException(
        ErrorCode.RATE_LIMITED,
        'Rate limit exceeded: permission lookups of this workspace',
        undefined,
        retryAfter ? { 'Retry-After': retryAfter } : undefined,
      );
    }
    if (!res.ok)
      throw new StrataException(ErrorCode.UNAVAILABLE, `Permission resolution failed with status ${res.status}`);
    const body = (await res.json()) as Partial<PermissionsResponse>;
    const displayName = body.principal?.displayName;
    return {
      permissions: new Set(body.permissions ?? []),
      collections: body.collectionPermissions ?? {},
      ...(typeof displayName === 'string' ? { displayName } : {}),
    };
  }

  private evictExpired(now: number): void {
    for (const [k, v] of this.cache) if (v.expiresAt <= now) this.cache.delete(k);
  }
}

/** The auth service refused the credential (revoked, disabled, no access): not a passing failure. */
function isRefusal(err: unknown): boolean {
  return (
    err instanceof StrataException && (err.code === ErrorCode.UNAUTHORIZED || err.code === ErrorCode.WORKSPACE_MISMATCH)
  );
}
