import { Injectable } from '@nestjs/common';
import { ADMIN_GROUP, ErrorCode, type WorkspaceFacts } from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import { isUniqueViolation, issueWorkspaceScope, Transactions, type Tx, type WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import { AuthConfig } from '../auth.config.js';
import { FunctionPrincipalsService } from '../function-principals/function-principals.service.js';
import { GroupsRepository } from '../groups/groups.repository.js';
import { UsersRepository } from '../users/users.repository.js';
import { WorkspacesRepository, type WorkspaceRow } from './workspaces.repository.js';

export interface Workspace {
  id: string;
  slug: string;
  name: string;
  description: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

const toWorkspace = (r: WorkspaceRow): Workspace => ({
  id: r.id,
  slug: r.slug,
  name: r.name,
  description: r.description,
  createdBy: r.created_by,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

@Injectable()
export class WorkspacesService {
  constructor(
    private readonly transactions: Transactions,
    private readonly workspaces: WorkspacesRepository,
    private readonly groups: GroupsRepository,
    private readonly functionPrincipals: FunctionPrincipalsService,
    private readonly users: UsersRepository,
    private readonly config: AuthConfig,
  ) {}

  /**
   * Creates the workspace, its administrators group with the creator in it, and its
   * function principal (docs/compute.md), in one transaction, within the creator's
   * quota (docs/identity.md, "Workspaces").
   */
  async create(
    userId: string,
    input: { slug: string; name: string; description?: string | undefined },
  ): Promise<Workspace> {
    try {
      return await this.transactions.run(async (tx) => {
        await this.withinQuota(tx, userId);
        const row = await this.workspaces.insert(tx, {
          id: newUuid(),
          slug: input.slug,
          name: input.name,
          description: input.description ?? '',
          createdBy: userId,
        });
        // The workspace was created in this transaction by this caller: its first rows are written in its scope.
        const scope = issueWorkspaceScope(row.slug);
        const admins = await this.groups.insert(scope, tx, {
          id: newUuid(),
          name: ADMIN_GROUP,
          description: 'Grants every permission in the workspace',
        });
        await this.groups.addMember(scope, tx, admins.id, 'user', userId);
        await this.functionPrincipals.ensure(scope, tx);
        return toWorkspace(row);
      });
    } catch (err) {
      if (isUniqueViolation(err, 'workspaces_slug_key')) {
        throw StrataException.conflict(`Workspace with slug '${input.slug}' already exists`);
      }
      throw err;
    }
  }

  /**
   * Refuses (403 PLAN_RESTRICTED) a user who created WORKSPACE_QUOTA_PER_USER workspaces
   * already; a platform administrator has no quota. The user's row stays locked until the
   * transaction ends, so concurrent creations by one user are counted one after another.
   */
  private async withinQuota(tx: Tx, userId: string): Promise<void> {
    const user = await this.users.lockForUpdate(tx, userId);
    if (user?.is_platform_admin) return;
    const quota = this.config.WORKSPACE_QUOTA_PER_USER;
    const created = await this.workspaces.countCreatedBy(tx, userId);
    if (created < quota) return;
    throw StrataException.forbidden(
      `Workspace quota exceeded: a user may create at most ${quota} workspace${quota === 1 ? '' : 's'} ` +
        `and you have created ${created}. Ask a platform administrator for a workspace or a higher quota.`,
      ErrorCode.PLAN_RESTRICTED,
    );
  }

  /** What the other services are told about a workspace (its creator, for one). */
  async facts(scope: WorkspaceScope): Promise<WorkspaceFacts> {
    const row = await this.workspaces.find(scope);
    if (!row) throw StrataException.notFound(`Workspace '${scope.workspace}' not found`, ErrorCode.NOT_FOUND);
    const creator = await this.users.findById(row.created_by);
    return {
      slug: row.slug,
      id: row.id,
      createdBy: { type: 'user', id: row.created_by, platformAdmin: creator?.is_platform_admin === true },
      createdAt: row.created_at.toISOString(),
    };
  }

  /** Workspaces in which the user belongs to at least one group. */
  async listForUser(userId: string): Promise<Workspace[]> {
    return (await this.workspaces.listForUser(userId)).map(toWorkspace);
  }

  async getForUser(userId: string, slug: string): Promise<Workspace> {
    const row = await this.workspaces.findForMember(userId, slug);
    if (!row) throw StrataException.notFound(`Workspace '${slug}' not found`, ErrorCode.NOT_FOUND);
    return toWorkspace(row);
  }

  async isMember(userId: string, slug: string): Promise<boolean> {
    return (await this.workspaces.findForMember(userId, slug)) !== undefined;
  }
}
