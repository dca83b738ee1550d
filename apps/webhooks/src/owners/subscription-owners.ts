import { Injectable } from '@nestjs/common';
import { permitsOnCollection, type CollectionPermissions } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import type { PermissionsResponse } from '@strata/platform';
import type { SubscriptionOwner } from '../subscriptions/subscription.js';
import { WebhooksConfig } from '../webhooks.config.js';
import { ServiceTokens } from './service-tokens.js';

interface OwnerPermissions {
  readonly permissions: ReadonlySet<string>;
  readonly collections: CollectionPermissions;
}

interface Entry {
  readonly expiresAt: number;
  readonly value: Promise<OwnerPermissions>;
}

const TIMEOUT_MS = 5000;
const NOTHING: OwnerPermissions = { permissions: new Set(), collections: {} };

/**
 * What the owner of a subscription may see, asked of the auth service
 * (`GET {auth_url}/internal/workspaces/{workspace}/principals/{type}/{id}/permissions`,
 * presenting the workspace's function principal) and kept for
 * `PERMISSION_CACHE_TTL_MS`, as every service keeps a caller's permissions: a
 * policy change reaches deliveries within the same seconds as it reaches the API.
 * An owner that no longer exists, is revoked or disabled may see nothing.
 * A failed lookup throws: the event is taken again later, nothing is dropped.
 */
@Injectable()
export class SubscriptionOwners {
  private readonly cache = new Map<string, Entry>();
  private readonly base: string;
  private readonly ttl: number;

  constructor(
    config: WebhooksConfig,
    private readonly tokens: ServiceTokens,
  ) {
    this.base = config.AUTH_INTERNAL_URL.replace(/\/$/, '');
    this.ttl = config.PERMISSION_CACHE_TTL_MS;
  }

  /** Whether the owner may list the records of the collection `recordSlug`. */
  async mayList(scope: WorkspaceScope, owner: SubscriptionOwner, recordSlug: string): Promise<boolean> {
    const held = await this.permissionsOf(scope, owner);
    return permitsOnCollection(held.permissions, held.collections, 'list', recordSlug);
  }

  private permissionsOf(scope: WorkspaceScope, owner: SubscriptionOwner): Promise<OwnerPermissions> {
    const key = `${scope.workspace}\u0000${owner.type}\u0000${owner.id}`;
    const now = Date.now();
    const hit = this.cache.get(key);
    if (hit && hit.expiresAt > now) return hit.value;
    const value = this.fetch(scope, owner);
    this.cache.set(key, { expiresAt: now + this.ttl, value });
    value.catch(() => this.cache.delete(key));
    if (this.cache.size > 10_000) for (const [k, v] of this.cache) if (v.expiresAt <= now) this.cache.delete(k);
    return value;
  }

  private async fetch(scope: WorkspaceScope, owner: SubscriptionOwner): Promise<OwnerPermissions> {
    const url =
      `${this.base}/internal/workspaces/${encodeURIComponent(scope.workspace)}` +
      `/principals/${owner.type}/${encodeURIComponent(owner.id)}/permissions`;
    const token = await this.tokens.tokenFor(scope);
    const res = await fetch(url, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (res.status === 404) return NOTHING;
    if (res.status === 401) this.tokens.forget(scope);
    if (!res.ok)
      throw new Error(`the auth service answered ${res.status} for the permissions of ${owner.type} ${owner.id}`);
    const body = (await res.json()) as Partial<PermissionsResponse>;
    return { permissions: new Set(body.permissions ?? []), collections: body.collectionPermissions ?? {} };
  }
}
