import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/**
 * iam.login_workspaces: the workspace a user chose at an interactive login,
 * by the OIDC grant it belongs to, so that the grant's tokens carry it.
 * Looked up by grant id (the provider's own identifier), not within a workspace.
 */
@Injectable()
export class LoginWorkspacesRepository {
  constructor(private readonly db: DataSource) {}

  async remember(grantId: string, workspace: string): Promise<void> {
    await this.db.query(
      `INSERT INTO iam.login_workspaces (grant_id, workspace_slug) VALUES ($1, $2)
       ON CONFLICT (grant_id) DO UPDATE SET workspace_slug = EXCLUDED.workspace_slug`,
      [grantId, workspace],
    );
  }

  async workspaceOf(grantId: string): Promise<string | undefined> {
    const rows = await this.db.query<{ workspace_slug: string }[]>(
      'SELECT workspace_slug FROM iam.login_workspaces WHERE grant_id = $1',
      [grantId],
    );
    return rows[0]?.workspace_slug;
  }
}
