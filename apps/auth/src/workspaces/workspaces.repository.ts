import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { managerOf, type Tx, type WorkspaceScope } from '@strata/db';

export interface WorkspaceRow {
  id: string;
  slug: string;
  name: string;
  description: string;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

/**
 * iam.workspaces, and which workspaces a user belongs to. These statements are
 * about workspaces themselves (creating one, a user's own memberships), so
 * they take no WorkspaceScope: their routes are marked @WorkspaceLess(). The
 * facts of one workspace are read within it (`find`).
 */
@Injectable()
export class WorkspacesRepository {
  constructor(private readonly db: DataSource) {}

  async insert(
    tx: Tx,
    workspace: { id: string; slug: string; name: string; description: string; createdBy: string },
  ): Promise<WorkspaceRow> {
    const rows = await managerOf(this.db, tx).query<WorkspaceRow[]>(
      `INSERT INTO iam.workspaces (id, slug, name, description, created_by) VALUES ($1, $2, $3, $4, $5) RETURNING *`,
      [workspace.id, workspace.slug, workspace.name, workspace.description, workspace.createdBy],
    );
    return rows[0]!;
  }

  /** How many workspaces the user created (that still exist). */
  async countCreatedBy(tx: Tx, userId: string): Promise<number> {
    const [row] = await managerOf(this.db, tx).query<{ count: number }[]>(
      'SELECT count(*)::int AS count FROM iam.workspaces WHERE created_by = $1',
      [userId],
    );
    return row!.count;
  }

  /** The workspace a checked credential of it names. */
  async find(scope: WorkspaceScope): Promise<WorkspaceRow | undefined> {
    const rows = await this.db.query<WorkspaceRow[]>('SELECT * FROM iam.workspaces WHERE slug = $1', [scope.workspace]);
    return rows[0];
  }

  /** Workspaces in which the user belongs to at least one group. */
  listForUser(userId: string): Promise<WorkspaceRow[]> {
    return this.db.query<WorkspaceRow[]>(
      `SELECT w.* FROM iam.workspaces w
        WHERE EXISTS (SELECT 1 FROM iam.group_members m JOIN iam.groups g ON g.id = m.group_id
                       WHERE g.workspace_slug = w.slug AND m.principal_type = 'user' AND m.principal_id = $1)
        ORDER BY w.created_at, w.slug`,
      [userId],
    );
  }

  /** The workspace, when the user belongs to one of its groups. */
  async findForMember(userId: string, slug: string): Promise<WorkspaceRow | undefined> {
    const rows = await this.db.query<WorkspaceRow[]>(
      `SELECT w.* FROM iam.workspaces w
        WHERE w.slug = $1
          AND EXISTS (SELECT 1 FROM iam.group_members m JOIN iam.groups g ON g.id = m.group_id
                       WHERE g.workspace_slug = w.slug AND m.principal_type = 'user' AND m.principal_id = $2)`,
      [slug, userId],
    );
    return rows[0];
  }
}
