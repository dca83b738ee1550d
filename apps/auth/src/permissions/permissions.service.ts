import { Injectable } from '@nestjs/common';
import { hashToken } from '@strata/crypto';
import type { WorkspaceScope } from '@strata/db';
import { StrataException, type Principal } from '@strata/platform';
import { GroupsRepository } from '../groups/groups.repository.js';
import { PublishableKeysRepository } from '../publishable-keys/publishable-keys.repository.js';
import { UsersService } from '../users/users.service.js';
import { ServiceAccountsService } from '../service-accounts/service-accounts.service.js';
import { effectivePermissions, type GroupGrant } from './effective-permissions.js';

export interface ResolvedPrincipal {
  readonly groups: string[];
  readonly permissions: string[];
  /** How the principal is named to people: a user's name (else email), a service account's name. */
  readonly displayName?: string;
}

/**
 * Resolves what a principal may do in a workspace, straight from the database,
 * and refuses principals that no longer exist or were revoked.
 */
@Injectable()
export class PermissionsService {
  constructor(
    private readonly groups: GroupsRepository,
    private readonly keys: PublishableKeysRepository,
    private readonly users: UsersService,
    private readonly serviceAccounts: ServiceAccountsService,
  ) {}

  async resolve(principal: Principal, scope: WorkspaceScope | undefined): Promise<ResolvedPrincipal> {
    switch (principal.type) {
      case 'publishable_key':
        return this.resolvePublishableKey(principal, scope);
      case 'service_account': {
        const account = await this.serviceAccounts.findActiveByClientId(principal.id);
        if (!account || account.workspace_slug !== principal.workspace) {
          throw StrataException.unauthorized('The service account is revoked or no longer exists');
        }
        const resolved = scope
          ? await this.fromGroups(scope, 'service_account', principal.id)
          : { groups: [], permissions: [] };
        return { ...resolved, displayName: account.name };
      }
      case 'user': {
        const user = await this.users.findById(principal.id);
        if (!user || user.disabled) throw StrataException.unauthorized('The user is disabled or no longer exists');
        const resolved = scope ? await this.fromGroups(scope, 'user', principal.id) : { groups: [], permissions: [] };
        return { ...resolved, displayName: user.displayName.trim() || user.email };
      }
      default: {
        const never: never = principal.type;
        throw new Error(`unknown principal type ${String(never)}`);
      }
    }
  }

  /** Group names of a principal in a workspace (for the `groups` token claim). */
  async groupNames(scope: WorkspaceScope, type: 'user' | 'service_account', id: string): Promise<string[]> {
    return (await this.fromGroups(scope, type, id)).groups;
  }

  private async fromGroups(
    scope: WorkspaceScope,
    type: 'user' | 'service_account',
    id: string,
  ): Promise<ResolvedPrincipal> {
    const rows = await this.groups.grantsOf(scope, type, id);
    const grants: GroupGrant[] = rows.map((r) => ({
      groupName: r.group_name,
      resource: r.resource,
      actions: r.actions,
    }));
    return { groups: [...new Set(grants.map((g) => g.groupName))].sort(), permissions: effectivePermissions(grants) };
  }

  private async resolvePublishableKey(
    principal: Principal,
    scope: WorkspaceScope | undefined,
  ): Promise<ResolvedPrincipal> {
    if (principal.credential.kind !== 'publishable_key' || !scope)
      throw StrataException.unauthorized('Invalid publishable key');
    const permissions = await this.keys.permissionsOf(scope, hashToken(principal.credential.key));
    if (!permissions) throw StrataException.unauthorized('Invalid or revoked publishable key');
    return { groups: [], permissions };
  }
}
