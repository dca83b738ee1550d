import { ADMIN_GROUP, isAction, permits, type CollectionPermissions } from '@strata/contracts';
import { RESOURCE_SPECIFIC_ACTIONS } from '../groups/dto/group.requests.js';

export interface GroupGrant {
  readonly groupName: string;
  readonly resource: string | null;
  readonly actions: readonly string[] | null;
  /** The collections a `records` policy is scoped to; null or absent for every collection. */
  readonly collections?: readonly string[] | null;
}

export interface EffectivePermissions {
  /** `resource:action` held on everything the resource covers; `*` for the administrators group. */
  readonly permissions: string[];
  /** `records:<action>` held on the listed collections only. */
  readonly collections: CollectionPermissions;
}

/**
 * The union of the policies of a principal's groups: `resource:action`
 * strings held everywhere, and the `records` actions held on some collections
 * only (a permission held everywhere through any policy is not listed per
 * collection). `*` when one of the groups is the administrators group. An
 * action that is not valid (`read`, accepted with a warning) grants nothing. Pure.
 */
export function effectivePermissions(grants: readonly GroupGrant[]): EffectivePermissions {
  if (grants.some((g) => g.groupName === ADMIN_GROUP)) return { permissions: ['*'], collections: {} };
  const everywhere = new Set<string>();
  const scoped = new Map<string, Set<string>>();
  for (const g of grants) {
    if (!g.resource || !g.actions) continue;
    const resource = g.resource;
    const valid = g.actions.filter((a) => isAction(a) || RESOURCE_SPECIFIC_ACTIONS[resource]?.includes(a));
    for (const action of valid) {
      const permission = `${resource}:${action}`;
      if (!g.collections) {
        everywhere.add(permission);
        continue;
      }
      const slugs = scoped.get(permission) ?? new Set<string>();
      for (const slug of g.collections) slugs.add(slug);
      scoped.set(permission, slugs);
    }
  }
  const collections: Record<string, string[]> = {};
  for (const [permission, slugs] of [...scoped].sort(([a], [b]) => a.localeCompare(b))) {
    const [resource, action] = permission.split(':') as [string, string];
    if (permits(everywhere, resource, action)) continue;
    collections[permission] = [...slugs].sort();
  }
  return { permissions: [...everywhere].sort(), collections };
}
