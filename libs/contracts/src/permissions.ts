/** Actions a policy may grant. `manage` means every action on the resource. */
export const ACTIONS = ['create', 'retrieve', 'list', 'update', 'delete', 'manage', 'validate', 'execute'] as const;
export type Action = (typeof ACTIONS)[number];

/** Resources a policy may name. */
export const RESOURCES = [
  'records',
  'structures',
  'saved-queries',
  'compute-functions',
  'function-triggers',
  'function-runs',
  'secrets',
  'webhook-subscriptions',
  'orchestrations',
  'inbound-events',
  'service-accounts',
  'groups',
  'publishable-keys',
  'workspaces',
  // The storage service (docs/storage.md): files, and the buckets that hold them.
  'files',
  'buckets',
] as const;
export type Resource = (typeof RESOURCES)[number];

/**
 * Actions outside the CRUD set that exist on one resource only
 * (`secrets:reveal`, the OAuth scopes `webhooks:replay` / `webhooks:cancel`).
 */
export const SPECIAL_PERMISSIONS = ['secrets:reveal', 'webhooks:replay', 'webhooks:cancel'] as const;
export type SpecialPermission = (typeof SPECIAL_PERMISSIONS)[number];

/** A permission string `resource:action`, or `*` for everything in the workspace. */
export type Permission = `${Resource}:${Action}` | SpecialPermission | '*';

/** The group that grants every permission in its workspace. */
export const ADMIN_GROUP = 'workspace_administrators';

/** Actions a publishable key may carry: read only. */
export const PUBLISHABLE_ACTIONS: readonly Action[] = ['retrieve', 'list'];

export function isAction(value: string): value is Action {
  return (ACTIONS as readonly string[]).includes(value);
}

export function isResource(value: string): value is Resource {
  return (RESOURCES as readonly string[]).includes(value);
}

/**
 * Whether a set of granted permissions allows `resource:action`.
 * `*` allows everything; `resource:manage` allows every action on the resource.
 */
export function permits(granted: ReadonlySet<string>, resource: string, action: string): boolean {
  return granted.has('*') || granted.has(`${resource}:${action}`) || granted.has(`${resource}:manage`);
}

/**
 * The group each workspace's function principal is put in when the workspace is
 * created, with these policies: what compute functions may do through `api`
 * until an administrator changes the group (docs/compute.md).
 */
export const FUNCTIONS_GROUP = 'compute-functions';
export const FUNCTIONS_GROUP_POLICIES: readonly { resource: Resource; actions: Action[] }[] = [
  { resource: 'records', actions: ['manage'] },
  { resource: 'structures', actions: ['retrieve', 'list'] },
  { resource: 'saved-queries', actions: ['retrieve', 'list', 'execute'] },
  // api.invokeTrigger (before 2026-11-27 it was not checked at all).
  { resource: 'function-triggers', actions: ['execute'] },
];

/**
 * Policies scoped to collections (docs/identity.md): a `records` policy may name
 * the collections (by slug) its actions apply to; without a list it applies to
 * every collection. Only `records` takes a list.
 */
export const COLLECTION_SCOPED_RESOURCES: readonly Resource[] = ['records'];

/** A collection's slug (`recordSlug`), as the data service accepts it. */
export const COLLECTION_SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * Permissions held on some collections only: `records:<action>` → the slugs of
 * those collections (sorted, no duplicates). A permission held on every
 * collection is in the unscoped set instead, never here.
 */
export type CollectionPermissions = Readonly<Record<string, readonly string[]>>;

/**
 * Whether the caller may do `records:action` on the records of the collection
 * `slug`: held unscoped (on every collection, `records:manage` or `*`), or
 * scoped to a list naming `slug` (the action itself or `manage`). Pure.
 */
export function permitsOnCollection(
  granted: ReadonlySet<string>,
  collections: CollectionPermissions,
  action: string,
  slug: string,
): boolean {
  if (permits(granted, 'records', action)) return true;
  return (
    (collections[`records:${action}`]?.includes(slug) ?? false) ||
    (collections['records:manage']?.includes(slug) ?? false)
  );
}

/**
 * Whether `resource:action` is held on anything at all: unscoped, or on at
 * least one collection. What a route's permission check asks before its
 * handler decides per collection.
 */
export function permitsAnywhere(
  granted: ReadonlySet<string>,
  collections: CollectionPermissions,
  resource: string,
  action: string,
): boolean {
  if (permits(granted, resource, action)) return true;
  return (
    (collections[`${resource}:${action}`]?.length ?? 0) > 0 || (collections[`${resource}:manage`]?.length ?? 0) > 0
  );
}
