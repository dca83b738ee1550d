import { Injectable } from '@nestjs/common';
import { hashToken } from '@strata/crypto';
import { ErrorCode, ID_FORMATS, type CollectionPermissions } from '@strata/contracts';
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
  /** `records:<action>` held on the listed collections only (docs/identity.md). */
  readonly collections: CollectionPermissions;
}

const NOTHING = { groups: [], permissions: [], collections: {} } as const satisfies ResolvedPrincipal;

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
        const resolved = scope ? await this.fromGroups(scope, 'service_account', principal.id) : NOTHING;
        return { ...resolved, displayName: account.name };
      }
      case 'user': {
        const user = await this.users.findById(principal.id);
        if (!user || user.disabled) throw StrataException.unauthorized('The user is disabled or no longer exists');
        const resolved = scope ? await this.fromGroups(scope, 'user', principal.id) : NOTHING;
        return { ...resolved, displayName: user.displayName.trim() || user.email };
      }
      default: {
        const never: never = principal.type;
        throw new Error(`unknown principal type ${String(never)}`);
      }
    }
  }

  /**
   * What a user or service account of the workspace may do there, asked by a
   * service on its behalf without its credential (the owner of a webhook
   * subscription). Undefined when it no longer exists, is revoked or disabled,
   * or (a service account) belongs to another workspace.
   */
  async resolveMember(
    scope: WorkspaceScope,
    type: 'user' | 'service_account',
    id: string,
  ): Promise<ResolvedPrincipal | undefined> {
    if (type === 'service_account') {
      const account = await this.serviceAccounts.findActiveByClientId(id);
      if (!account || account.workspace_slug !== scope.workspace) return undefined;
    } else {
      const user = ID_FORMATS.uuid.test(id) ? await this.users.findById(id) : undefined;
      if (!user || user.disabled) return undefined;
    }
    return this.fromGroups(scope, type, id);
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
      collections: r.collections,
    }));
    const effective = effectivePermissions(grants);
    return {
      groups: [...new Set(grants.map((g) => g.groupName))].sort(),
      permissions: effective.permissions,
      collections: effective.collections,
    };
  }

  private async resolvePublishableKey(
    principal: Principal,
    scope: WorkspaceScope | undefined,
  ): Promise<ResolvedPrincipal> {
    if (principal.credential.kind !== 'publishable_key' || !scope)
      throw StrataException.unauthorized('Invalid publishable key');
    const hash = hashToken(principal.credential.key);
    const permissions = await this.keys.permissionsOf(scope, hash);
    if (!permissions) {
      // A live key of another workspace: the caller holds a key, on the wrong URL (as a token would be).
      if (await this.keys.belongsElsewhere(scope, hash)) {
        throw StrataException.forbidden(
          `The publishable key is not valid for workspace '${scope.workspace}'`,
          ErrorCode.WORKSPACE_MISMATCH,
        );
      }
      throw StrataException.unauthorized('Invalid or revoked publishable key');
    }
    return { groups: [], permissions, collections: {} };
  }
}
