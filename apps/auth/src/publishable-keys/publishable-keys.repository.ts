import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { rowsOf, type WorkspaceScope } from '@strata/db';

export interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  permissions: string[];
  workspace_slug: string;
  created_at: Date;
  created_by: string;
  revoked_at: Date | null;
}

/** iam.publishable_keys, always within one workspace; a key is found by its hash, never by its text. */
@Injectable()
export class PublishableKeysRepository {
  constructor(private readonly db: DataSource) {}

  async insert(
    scope: WorkspaceScope,
    key: { id: string; name: string; prefix: string; hash: string; permissions: string[]; createdBy: string },
  ): Promise<KeyRow> {
    const rows = await this.db.query<KeyRow[]>(
      `INSERT INTO iam.publishable_keys (id, workspace_slug, name, prefix, key_hash, permissions, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [key.id, scope.workspace, key.name, key.prefix, key.hash, key.permissions, key.createdBy],
    );
    return rows[0]!;
  }

  list(scope: WorkspaceScope): Promise<KeyRow[]> {
    return this.db.query<KeyRow[]>('SELECT * FROM iam.publishable_keys WHERE workspace_slug = $1 ORDER BY created_at', [
      scope.workspace,
    ]);
  }

  async revoke(scope: WorkspaceScope, id: string): Promise<KeyRow | undefined> {
    const rows = rowsOf<KeyRow>(
      await this.db.query(
        `UPDATE iam.publishable_keys SET revoked_at = coalesce(revoked_at, now())
          WHERE workspace_slug = $1 AND id = $2 RETURNING *`,
        [scope.workspace, id],
      ),
    );
    return rows[0];
  }

  /** The permissions of the live key with this hash in the workspace, if there is one. */
  async permissionsOf(scope: WorkspaceScope, keyHash: string): Promise<string[] | undefined> {
    const rows = await this.db.query<{ permissions: string[] }[]>(
      'SELECT permissions FROM iam.publishable_keys WHERE key_hash = $1 AND workspace_slug = $2 AND revoked_at IS NULL',
      [keyHash, scope.workspace],
    );
    return rows[0]?.permissions;
  }

  /**
   * Whether a live key with this hash belongs to a workspace other than the
   * scope's (it was presented on another workspace's URL). Answers nothing
   * about which one.
   */
  async belongsElsewhere(scope: WorkspaceScope, keyHash: string): Promise<boolean> {
    const rows = await this.db.query<unknown[]>(
      'SELECT 1 FROM iam.publishable_keys WHERE key_hash = $1 AND workspace_slug <> $2 AND revoked_at IS NULL',
      [keyHash, scope.workspace],
    );
    return rows.length > 0;
  }
}
