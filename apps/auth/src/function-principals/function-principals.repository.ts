import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { managerOf, rowsOf, type Tx, type WorkspaceScope } from '@strata/db';

export interface NewFunctionPrincipal {
  readonly clientId: string;
  readonly secretHash: string;
  /** The account's name, and its group's, when free in the workspace (else suffixed). */
  readonly name: string;
  readonly description: string;
  readonly groupId: string;
  readonly groupName: string;
  readonly groupDescription: string;
  readonly policies: readonly { readonly id: string; readonly resource: string; readonly actions: readonly string[] }[];
}

/**
 * The function principal of a workspace: a service account row (so tokens,
 * groups, policies, revocation and the service-account API treat it like any
 * other) and, when it is first made, its group with the default policies.
 */
@Injectable()
export class FunctionPrincipalsRepository {
  constructor(private readonly db: DataSource) {}

  /**
   * Creates the principal of the workspace in `tx` when it has none: the account,
   * the group with its policies, the membership. A name already taken in the
   * workspace (by an account or group someone made) gets a suffix. Whether it was made now.
   */
  async ensure(scope: WorkspaceScope, tx: Tx, p: NewFunctionPrincipal): Promise<boolean> {
    const db = managerOf(this.db, tx);
    const [inserted] = await db.query<{ client_id: string }[]>(
      `INSERT INTO iam.service_accounts (workspace_slug, client_id, secret_hash, name, description, created_by)
       SELECT $1, $2, $3,
              CASE WHEN EXISTS (SELECT 1 FROM iam.service_accounts WHERE workspace_slug = $1 AND name = $4)
                   THEN $4 || '-' || substr(md5(random()::text), 1, 6) ELSE $4 END,
              $5, 'system'
        WHERE EXISTS (SELECT 1 FROM iam.workspaces WHERE slug = $1)
       ON CONFLICT (client_id) DO NOTHING RETURNING client_id`,
      [scope.workspace, p.clientId, p.secretHash, p.name, p.description],
    );
    if (!inserted) return false;
    await db.query(
      `INSERT INTO iam.groups (id, workspace_slug, name, description)
       SELECT $2, $1,
              CASE WHEN EXISTS (SELECT 1 FROM iam.groups WHERE workspace_slug = $1 AND name = $3)
                   THEN $3 || '-' || substr(md5(random()::text), 1, 6) ELSE $3 END,
              $4`,
      [scope.workspace, p.groupId, p.groupName, p.groupDescription],
    );
    for (const policy of p.policies) {
      await db.query(
        `INSERT INTO iam.policies (id, group_id, resource, actions)
         SELECT $3, g.id, $4, $5 FROM iam.groups g WHERE g.workspace_slug = $1 AND g.id = $2`,
        [scope.workspace, p.groupId, policy.id, policy.resource, policy.actions],
      );
    }
    await db.query(
      `INSERT INTO iam.group_members (group_id, principal_type, principal_id)
       SELECT g.id, 'service_account', $3 FROM iam.groups g WHERE g.workspace_slug = $1 AND g.id = $2`,
      [scope.workspace, p.groupId, p.clientId],
    );
    return true;
  }

  /** Sets the principal's secret hash (after a key change); whether it changed. */
  async setSecretHash(scope: WorkspaceScope, clientId: string, secretHash: string): Promise<boolean> {
    const rows = rowsOf<{ client_id: string }>(
      await this.db.query(
        `UPDATE iam.service_accounts SET secret_hash = $3, updated_at = now()
          WHERE workspace_slug = $1 AND client_id = $2 AND secret_hash <> $3 RETURNING client_id`,
        [scope.workspace, clientId, secretHash],
      ),
    );
    return rows.length > 0;
  }

  /** System (every workspace): workspace slugs, for the boot-time pass that makes missing principals. */
  async allWorkspaces(): Promise<string[]> {
    const rows = await this.db.query<{ slug: string }[]>('SELECT slug FROM iam.workspaces ORDER BY slug');
    return rows.map((r) => r.slug);
  }
}
