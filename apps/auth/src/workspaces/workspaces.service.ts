import { Injectable } from '@nestjs/common';
import { ADMIN_GROUP, ErrorCode } from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import { isUniqueViolation, issueWorkspaceScope, Transactions } from '@strata/db';
import { StrataException } from '@strata/platform';
import { FunctionPrincipalsService } from '../function-principals/function-principals.service.js';
import { GroupsRepository } from '../groups/groups.repository.js';
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
  ) {}

  /**
   * Creates the workspace, its administrators group with the creator in it, and its
   * function principal (docs/compute.md), in one transaction.
   */
  async create(
    userId: string,
    input: { slug: string; name: string; description?: string | undefined },
  ): Promise<Workspace> {
    try {
      return await this.transactions.run(async (tx) => {
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
