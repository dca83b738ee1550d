import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { ADMIN_GROUP, ErrorCode } from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import { isUniqueViolation } from '@strata/db';
import { StrataException } from '@strata/platform';

export interface Workspace {
  id: string;
  slug: string;
  name: string;
  description: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

interface WorkspaceRow {
  id: string;
  slug: string;
  name: string;
  description: string;
  created_by: string;
  created_at: Date;
  updated_at: Date;
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
  constructor(private readonly db: DataSource) {}

  /** Creates the workspace and its administrators group with the creator in it, in one transaction. */
  async create(
    userId: string,
    input: { slug: string; name: string; description?: string | undefined },
  ): Promise<Workspace> {
    try {
      return await this.db.transaction(async (tx: EntityManager) => {
        const rows: WorkspaceRow[] = await tx.query(
          `INSERT INTO iam.workspaces (id, slug, name, description, created_by) VALUES ($1, $2, $3, $4, $5) RETURNING *`,
          [newUuid(), input.slug, input.name, input.description ?? '', userId],
        );
        const groupId = newUuid();
        await tx.query(
          `INSERT INTO iam.groups (id, workspace_slug, name, description) VALUES ($1, $2, $3, 'Grants every permission in the workspace')`,
          [groupId, input.slug, ADMIN_GROUP],
        );
        await tx.query(
          `INSERT INTO iam.group_members (group_id, principal_type, principal_id) VALUES ($1, 'user', $2)`,
          [groupId, userId],
        );
        return toWorkspace(rows[0]!);
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
    const rows: WorkspaceRow[] = await this.db.query(
      `SELECT w.* FROM iam.workspaces w
        WHERE EXISTS (SELECT 1 FROM iam.group_members m JOIN iam.groups g ON g.id = m.group_id
                       WHERE g.workspace_slug = w.slug AND m.principal_type = 'user' AND m.principal_id = $1)
        ORDER BY w.created_at, w.slug`,
      [userId],
    );
    return rows.map(toWorkspace);
  }

  async getForUser(userId: string, slug: string): Promise<Workspace> {
    const rows: WorkspaceRow[] = await this.db.query('SELECT * FROM iam.workspaces WHERE slug = $1', [slug]);
    if (!rows[0] || !(await this.isMember(userId, slug))) {
      throw StrataException.notFound(`Workspace '${slug}' not found`, ErrorCode.NOT_FOUND);
    }
    return toWorkspace(rows[0]);
  }

  async isMember(userId: string, slug: string): Promise<boolean> {
    const rows: unknown[] = await this.db.query(
      `SELECT 1 FROM iam.group_members m JOIN iam.groups g ON g.id = m.group_id
        WHERE g.workspace_slug = $1 AND m.principal_type = 'user' AND m.principal_id = $2 LIMIT 1`,
      [slug, userId],
    );
    return rows.length > 0;
  }
}
