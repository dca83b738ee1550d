import { Injectable } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';
import { PermissionResolver, type Principal, type ResolvedPermissions } from '@strata/platform';
import { PermissionsService } from './permissions.service.js';

/** The auth service resolves permissions from its own tables, uncached: changes apply at once here. */
@Injectable()
export class LocalPermissionResolver extends PermissionResolver {
  constructor(private readonly permissions: PermissionsService) {
    super();
  }

  async resolve(principal: Principal, scope: WorkspaceScope | undefined): Promise<ResolvedPermissions> {
    const resolved = await this.permissions.resolve(principal, scope);
    return {
      permissions: new Set(resolved.permissions),
      collections: resolved.collections,
      ...(resolved.displayName !== undefined ? { displayName: resolved.displayName } : {}),
    };
  }
}
