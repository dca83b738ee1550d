import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { lockQuota, managerOf, rowsOf, type Tx, type WorkspaceScope } from '@strata/db';

export interface ServiceAccountRow {
  id: number;
  client_id: string;
  secret_hash: string;
  name: string;
  description: string;
  workspace_slug: string;
  grant_types: string[];
  scope: string;
  status: 'active' | 'revoked';
  created_at: Date;
  created_by: string;
  updated_at: Date;
  revoked_at: Date | null;
}

export interface NewServiceAccount {
  readonly clientId: string;
  readonly secretHash: string;
  readonly name: string;
  readonly description: string;
  readonly grantTypes: readonly string[];
  readonly scope: string;
  readonly createdBy: string;
}

/** The columns an update may set, each with its own statement text (no SQL comes from callers). */
const CHANGES = {
  name: 'name = $3',
  description: 'description = $3',
  secretHash: 'secret_hash = $3',
  revoked: `status = 'revoked', revoked_at = coalesce(revoked_at, now())`,
} as const;

export type ServiceAccountChange =
  | { readonly kind: 'name'; readonly value: string }
  | { readonly kind: 'description'; readonly value: string }
  | { readonly kind: 'secretHash'; readonly value: string }
  | { readonly kind: 'revoked' };

/**
 * iam.service_accounts. Management is always within one workspace; the one
 * lookup across workspaces is by client id, for the token endpoint and for
 * checking that a token's account is still active (client ids are unique).
 */
@Injectable()
export class ServiceAccountsRepository {
  constructor(private readonly db: DataSource) {}

  async insert(scope: WorkspaceScope, account: NewServiceAccount, tx?: Tx): Promise<ServiceAccountRow> {
    const rows = await managerOf(this.db, tx).query<ServiceAccountRow[]>(
      `INSERT INTO iam.service_accounts (workspace_slug, client_id, secret_hash, name, description, grant_types, scope, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [
        scope.workspace,
        account.clientId,
        account.secretHash,
        account.name,
        account.description,
        account.grantTypes,
        account.scope,
        account.createdBy,
      ],
    );
    return rows[0]!;
  }

  /**
   * How many accounts the workspace has, its count locked until `tx` ends (docs/plans.md):
   * concurrent creates are counted one after another, never together past the plan's limit.
   */
  async countLocked(scope: WorkspaceScope, tx: Tx): Promise<number> {
    await lockQuota(this.db, tx, scope, 'serviceAccounts');
    return this.count(scope, tx);
  }

  /** The workspace's own accounts: its function principal (the platform's, docs/compute.md) is not one of them. */
  async count(scope: WorkspaceScope, tx?: Tx): Promise<number> {
    const [row] = await managerOf(this.db, tx).query<[{ n: number }]>(
      `SELECT count(*)::int AS n FROM iam.service_accounts WHERE workspace_slug = $1 AND client_id NOT LIKE 'ci\\_functions\\_%'`,
      [scope.workspace],
    );
    return row.n;
  }

  /** One page of the workspace's accounts, by id, and how many there are in all. */
  async page(
    scope: WorkspaceScope,
    limit: number,
    offset: number,
  ): Promise<{ rows: ServiceAccountRow[]; total: number }> {
    const rows = await this.db.query<(ServiceAccountRow & { total: string })[]>(
      `SELECT *, count(*) OVER () AS total FROM iam.service_accounts WHERE workspace_slug = $1
        ORDER BY id LIMIT $2 OFFSET $3`,
      [scope.workspace, limit, offset],
    );
    if (rows[0]) return { rows, total: Number(rows[0].total) };
    const [counted] = await this.db.query<[{ n: number }]>(
      'SELECT count(*)::int AS n FROM iam.service_accounts WHERE workspace_slug = $1',
      [scope.workspace],
    );
    return { rows: [], total: counted.n };
  }

  async find(scope: WorkspaceScope, id: number): Promise<ServiceAccountRow | undefined> {
    const rows = await this.db.query<ServiceAccountRow[]>(
      'SELECT * FROM iam.service_accounts WHERE workspace_slug = $1 AND id = $2',
      [scope.workspace, id],
    );
    return rows[0];
  }

  async findByClientId(scope: WorkspaceScope, clientId: string): Promise<ServiceAccountRow | undefined> {
    const rows = await this.db.query<ServiceAccountRow[]>(
      'SELECT * FROM iam.service_accounts WHERE workspace_slug = $1 AND client_id = $2',
      [scope.workspace, clientId],
    );
    return rows[0];
  }

  /** The active account a client id names, whatever its workspace (token issuance, token checks). */
  async findActiveByClientId(clientId: string): Promise<ServiceAccountRow | undefined> {
    const rows = await this.db.query<ServiceAccountRow[]>(
      `SELECT * FROM iam.service_accounts WHERE client_id = $1 AND status = 'active'`,
      [clientId],
    );
    return rows[0];
  }

  async update(
    scope: WorkspaceScope,
    id: number,
    change: ServiceAccountChange,
  ): Promise<ServiceAccountRow | undefined> {
    const rows = rowsOf<ServiceAccountRow>(
      await this.db.query(
        `UPDATE iam.service_accounts SET ${CHANGES[change.kind]}, updated_at = now()
          WHERE workspace_slug = $1 AND id = $2 RETURNING *`,
        [scope.workspace, id, ...('value' in change ? [change.value] : [])],
      ),
    );
    return rows[0];
  }

  /** Deletes an account and its memberships in the workspace's groups, in one statement. */
  async delete(scope: WorkspaceScope, id: number): Promise<ServiceAccountRow | undefined> {
    const rows = await this.db.query<ServiceAccountRow[]>(
      `WITH deleted AS (
         DELETE FROM iam.service_accounts WHERE workspace_slug = $1 AND id = $2 RETURNING *
       ), memberships AS (
         DELETE FROM iam.group_members m USING iam.groups g, deleted d
          WHERE g.id = m.group_id AND g.workspace_slug = $1
            AND m.principal_type = 'service_account' AND m.principal_id = d.client_id
       )
       SELECT * FROM deleted`,
      [scope.workspace, id],
    );
    return rows[0];
  }
}
