import { ADMIN_GROUP } from '@strata/contracts';

export interface GroupGrant {
  readonly groupName: string;
  readonly resource: string | null;
  readonly actions: readonly string[] | null;
}

/**
 * The union of the policies of a principal's groups, as `resource:action`
 * strings; `*` when one of them is the administrators group. Pure.
 */
export function effectivePermissions(grants: readonly GroupGrant[]): string[] {
  if (grants.some((g) => g.groupName === ADMIN_GROUP)) return ['*'];
  const out = new Set<string>();
  for (const g of grants) {
    if (!g.resource || !g.actions) continue;
    for (const action of g.actions) out.add(`${g.resource}:${action}`);
  }
  return [...out].sort();
}
