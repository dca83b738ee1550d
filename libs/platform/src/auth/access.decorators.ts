import { createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import {
  permits,
  permitsAnywhere,
  permitsOnCollection,
  type Action,
  type CollectionPermissions,
  type Resource,
  type SpecialPermission,
} from '@strata/contracts';
import type { Request } from 'express';
import type { WorkspaceScope } from '@strata/db';
import type { Principal } from './principal.js';

export const ACCESS = 'strata:access';
export const USER_ONLY = 'strata:user-only';
export const REQUIRED_SCOPE = 'strata:required-scope';
export const WORKSPACE_LESS = 'strata:workspace-less';

export type AccessRule =
  | { readonly kind: 'public' }
  | { readonly kind: 'authenticated' }
  | { readonly kind: 'permission'; readonly permissions: readonly string[] };

/** No credential needed (health, discovery, signature-verified entry points). */
export const Public = (): ClassDecorator & MethodDecorator =>
  SetMetadata(ACCESS, { kind: 'public' } satisfies AccessRule);

/** Any valid credential; no particular permission. */
export const Authenticated = (): ClassDecorator & MethodDecorator =>
  SetMetadata(ACCESS, { kind: 'authenticated' } satisfies AccessRule);

/** The caller's groups must grant `resource:action` (or `resource:manage`) in the URL's workspace. */
export function RequirePermission(resource: Resource, action: Action): ClassDecorator & MethodDecorator;
export function RequirePermission(special: SpecialPermission): ClassDecorator & MethodDecorator;
export function RequirePermission(resource: string, action?: string): ClassDecorator & MethodDecorator {
  const permission = action === undefined ? resource : `${resource}:${action}`;
  return SetMetadata(ACCESS, { kind: 'permission', permissions: [permission] } satisfies AccessRule);
}

/** Every listed permission is needed (upsert needs records:create and records:update). */
export const RequireAllPermissions = (...permissions: `${Resource}:${Action}`[]): ClassDecorator & MethodDecorator =>
  SetMetadata(ACCESS, { kind: 'permission', permissions } satisfies AccessRule);

/** Only a user token (interactive login) may call the route; a service-account token gets 403. */
export const UserOnly = (): ClassDecorator & MethodDecorator => SetMetadata(USER_ONLY, true);

/** The bearer token must carry this OAuth scope (for example `webhooks:replay`). */
export const RequireScope = (scope: string): ClassDecorator & MethodDecorator => SetMetadata(REQUIRED_SCOPE, scope);

/**
 * The route is not about one workspace (creating or listing workspaces): it has
 * no `:workspace` parameter and gets no WorkspaceScope. Every other route that
 * is not `@Public()` must name its workspace in the path, or the app refuses
 * to boot (RouteAccessCheck).
 */
export const WorkspaceLess = (): ClassDecorator & MethodDecorator => SetMetadata(WORKSPACE_LESS, true);

export const PRINCIPAL = Symbol('strata:principal');
export const GRANTED = Symbol('strata:granted');
export const GRANTED_COLLECTIONS = Symbol('strata:granted-collections');
export const SCOPE = Symbol('strata:scope');
export type AuthenticatedRequest = Request & {
  [PRINCIPAL]?: Principal;
  [GRANTED]?: ReadonlySet<string>;
  [GRANTED_COLLECTIONS]?: CollectionPermissions;
  [SCOPE]?: WorkspaceScope;
};

/** What the caller may do beyond the route's own permission (for example `secrets:reveal`). */
export interface Grants {
  /** Held on everything the permission covers (for `records`: on every collection). */
  can(resource: string, action: string): boolean;
  /**
   * Whether the caller may do `action` on the records of the collection
   * `slug` (a policy unscoped, or scoped to a list naming it). A collection it
   * may not reach is to be answered as absent (404), never 403.
   */
  canOnCollection(action: Action, slug: string): boolean;
  /** Held at all: on everything, or on at least one collection (what a route's permission check asks). */
  canAnywhere(resource: string, action: string): boolean;
}

/** The grants of resolved permissions (also for callers outside a request, such as tests). */
export function grantsOf(granted: ReadonlySet<string>, collections: CollectionPermissions): Grants {
  return {
    can: (resource, action) => permits(granted, resource, action),
    canOnCollection: (action, slug) => permitsOnCollection(granted, collections, action, slug),
    canAnywhere: (resource, action) => permitsAnywhere(granted, collections, resource, action),
  };
}

/** The caller's effective permissions in the URL's workspace, as resolved by the access guard. */
export const CallerGrants = createParamDecorator((_: unknown, ctx: ExecutionContext): Grants => {
  const req = ctx.switchToHttp().getRequest<AuthenticatedRequest>();
  return grantsOf(req[GRANTED] ?? new Set<string>(), req[GRANTED_COLLECTIONS] ?? {});
});

/** The authenticated caller of the current request. */
export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const principal = ctx.switchToHttp().getRequest<AuthenticatedRequest>()[PRINCIPAL];
  if (!principal) throw new Error('CurrentPrincipal used on a route without authentication');
  return principal;
});

/**
 * The workspace scope the access guard issued for this request: the URL's
 * workspace, once the caller's credential was checked against it. Every
 * repository method that touches tenant data takes it.
 */
export const CallerScope = createParamDecorator((_: unknown, ctx: ExecutionContext): WorkspaceScope => {
  const scope = ctx.switchToHttp().getRequest<AuthenticatedRequest>()[SCOPE];
  if (!scope) throw new Error('CallerScope used on a route without a workspace (public or @WorkspaceLess)');
  return scope;
});
