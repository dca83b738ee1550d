import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { hashToken } from '@strata/crypto';
import { StrataException, type Principal } from '@strata/platform';
import { UsersService } from '../users/users.service.js';
import { ServiceAccountsService } from '../service-accounts/service-accounts.service.js';
import { effectivePermissions, type GroupGrant } from './effective-permissions.js';

export interface ResolvedPrincipal {
  readonly groups: string[];
  readonly permissions: string[];
}

/**
 * Resolves what a principal may do in a workspace, straight from the database,
 * and refuses principals that no longer exist or were revoked.
 */
@Injectable()
export class PermissionsService {
  constructor(
    private readonly db: DataSource,
    private readonly users: UsersService,
    private readonly serviceAccounts: ServiceAccountsService,
  ) {}

  async resolve(principal: Principal, workspace: string | undefined): Promise<ResolvedPrincipal> {
    switch (principal.type) {
      case 'publishable_key':
        return this.resolvePublishableKey(principal, workspace);
      case 'service_account': {
        const account = await this.serviceAccounts.findActiveByClientId(principal.id);
        if (!account || account.workspace_slug !== principal.workspace) {
          throw StrataException.unauthorized('The service account is revoked or no longer exists');
        }
        return workspace
          ? this.fromGroups('service_account', principal.id, workspace)
          : { groups: [], permissions: [] };
      }
      case 'user': {
        const user = await this.users.findById(principal.id);
        if (!user || user.disabled) throw StrataException.unauthorized('The user is disabled or no longer exists');
        return workspace ? this.fromGroups('user', principal.id, workspace) : { groups: [], permissions: [] };
      }
      default: {
        const never: never = principal.type;
        throw new Error(`unknown principal type ${String(never)}`);
      }
    }
  }

  /** Group names of a principal in a workspace (for the `groups` token claim). */
  async groupNames(type: 'user' | 'service_account', id: string, workspace: string): Promise<string[]> {
    return (await this.fromGroups(type, id, workspace)).groups;
  }

  private async fromGroups(
    type: 'user' | 'service_account',
    id: string,
    workspace: string,
  ): Promise<ResolvedPrincipal> {
    const rows: { group_name: string; resource: string | null; actions: string[] | null }[] = await this.db.query(
      `SELECT g.name AS group_name, p.resource, p.actions
         FROM iam.group_members m
         JOIN iam.groups g ON g.id = m.group_id
         LEFT JOIN iam.policies p ON p.group_id = g.id
        WHERE g.workspace_slug = $1 AND m.principal_type = $2 AND m.principal_id = $3`,
      [workspace, type, id],
    );
    const grants: GroupGrant[] = rows.map((r) => ({
      groupName: r.group_name,
      resource: r.resource,
      actions: r.actions,
    }));
    return { groups: [...new Set(grants.map((g) => g.groupName))].sort(), permissions: effectivePermissions(grants) };
  }

  private async resolvePublishableKey(principal: Principal, workspace: string | undefined): Promise<ResolvedPrincipal> {
    if (principal.credential.kind !== 'publishable_key' || !workspace)
      throw StrataException.unauthorized('Invalid publishable key');
    const rows: { permissions: string[] }[] = await this.db.query(
      'SELECT permissions FROM iam.publishable_keys WHERE key_hash = $1 AND workspace_slug = $2 AND revoked_at IS NULL',
      [hashToken(principal.credential.key), workspace],
    );
    if (!rows[0]) throw StrataException.unauthorized('Invalid or revoked publishable key');
    return { groups: [], permissions: rows[0].permissions };
  }
}
