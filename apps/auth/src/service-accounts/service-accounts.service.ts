import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ErrorCode } from '@strata/contracts';
import { hashToken, newClientId, newClientSecret } from '@strata/crypto';
import { isUniqueViolation, rowsOf } from '@strata/db';
import { StrataException } from '@strata/platform';

export interface ServiceAccount {
  id: number;
  clientId: string;
  name: string;
  description: string;
  workspace: string;
  grant_types: string[];
  scope: string;
  status: 'active' | 'revoked';
  createdAt: string;
  createdBy: string;
  updatedAt: string;
  revokedAt: string | null;
}

export type ServiceAccountWithSecret = ServiceAccount & { clientSecret: string };

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

const toServiceAccount = (r: ServiceAccountRow): ServiceAccount => ({
  id: r.id,
  clientId: r.client_id,
  name: r.name,
  description: r.description,
  workspace: r.workspace_slug,
  grant_types: r.grant_types,
  scope: r.scope,
  status: r.status,
  createdAt: r.created_at.toISOString(),
  createdBy: r.created_by,
  updatedAt: r.updated_at.toISOString(),
  revokedAt: r.revoked_at?.toISOString() ?? null,
});

const notFound = (id: number): StrataException => StrataException.notFound(`Service account ${id} not found`);

/**
 * Machine clients of one workspace. The secret is shown on create and rotate
 * only; the database keeps its SHA-256 (the secret is 256 random bits).
 */
@Injectable()
export class ServiceAccountsService {
  constructor(private readonly db: DataSource) {}

  async create(
    workspace: string,
    createdBy: string,
    input: {
      name: string;
      description?: string | undefined;
      grant_types?: string[] | undefined;
      scope?: string | undefined;
    },
  ): Promise<ServiceAccountWithSecret> {
    const secret = newClientSecret();
    const scope = normaliseScope(input.scope ?? 'openid');
    try {
      const rows: ServiceAccountRow[] = await this.db.query(
        `INSERT INTO iam.service_accounts (workspace_slug, client_id, secret_hash, name, description, grant_types, scope, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
        [
          workspace,
          newClientId(),
          hashToken(secret),
          input.name,
          input.description ?? '',
          input.grant_types ?? ['client_credentials'],
          scope,
          createdBy,
        ],
      );
      return { ...toServiceAccount(rows[0]!), clientSecret: secret };
    } catch (err) {
      throw this.nameConflict(err, input.name);
    }
  }

  async list(
    workspace: string,
    page: number,
    limit: number,
  ): Promise<{ data: ServiceAccount[]; meta: { total: number; page: number; limit: number } }> {
    const rows: (ServiceAccountRow & { total: string })[] = await this.db.query(
      `SELECT *, count(*) OVER () AS total FROM iam.service_accounts WHERE workspace_slug = $1 ORDER BY id LIMIT $2 OFFSET $3`,
      [workspace, limit, (page - 1) * limit],
    );
    let total = rows[0] ? Number(rows[0].total) : 0;
    if (!rows[0] && page > 1) {
      const [c] = await this.db.query<[{ n: number }]>(
        'SELECT count(*)::int AS n FROM iam.service_accounts WHERE workspace_slug = $1',
        [workspace],
      );
      total = c.n;
    }
    return { data: rows.map(toServiceAccount), meta: { total, page, limit } };
  }

  async get(workspace: string, id: number): Promise<ServiceAccount> {
    const rows: ServiceAccountRow[] = await this.db.query(
      'SELECT * FROM iam.service_accounts WHERE workspace_slug = $1 AND id = $2',
      [workspace, id],
    );
    if (!rows[0]) throw notFound(id);
    return toServiceAccount(rows[0]);
  }

  async rename(workspace: string, id: number, name: string): Promise<ServiceAccount> {
    try {
      return await this.update(workspace, id, 'name = $3', [name]);
    } catch (err) {
      throw this.nameConflict(err, name);
    }
  }

  describe(workspace: string, id: number, description: string): Promise<ServiceAccount> {
    return this.update(workspace, id, 'description = $3', [description]);
  }

  /** Replaces the secret: the old one fails from this commit on. */
  async rotate(workspace: string, id: number): Promise<ServiceAccountWithSecret> {
    const secret = newClientSecret();
    const account = await this.update(workspace, id, 'secret_hash = $3', [hashToken(secret)]);
    return { ...account, clientSecret: secret };
  }

  /** Disables the account: token requests fail at once, issued tokens within the permission cache time. */
  revoke(workspace: string, id: number): Promise<ServiceAccount> {
    return this.update(workspace, id, `status = 'revoked', revoked_at = coalesce(revoked_at, now())`, []);
  }

  async delete(workspace: string, id: number): Promise<void> {
    await this.db.transaction(async (tx) => {
      const rows = rowsOf<ServiceAccountRow>(
        await tx.query('DELETE FROM iam.service_accounts WHERE workspace_slug = $1 AND id = $2 RETURNING *', [
          workspace,
          id,
        ]),
      );
      if (!rows[0]) throw notFound(id);
      await tx.query(`DELETE FROM iam.group_members WHERE principal_type = 'service_account' AND principal_id = $1`, [
        rows[0].client_id,
      ]);
    });
  }

  /** The active account a client id names, for token issuance and permission resolution. */
  async findActiveByClientId(clientId: string): Promise<ServiceAccountRow | undefined> {
    const rows: ServiceAccountRow[] = await this.db.query(
      `SELECT * FROM iam.service_accounts WHERE client_id = $1 AND status = 'active'`,
      [clientId],
    );
    return rows[0];
  }

  async findByClientId(workspace: string, clientId: string): Promise<ServiceAccountRow | undefined> {
    const rows: ServiceAccountRow[] = await this.db.query(
      'SELECT * FROM iam.service_accounts WHERE workspace_slug = $1 AND client_id = $2',
      [workspace, clientId],
    );
    return rows[0];
  }

  private async update(workspace: string, id: number, set: string, params: unknown[]): Promise<ServiceAccount> {
    const rows = rowsOf<ServiceAccountRow>(
      await this.db.query(
        `UPDATE iam.service_accounts SET ${set}, updated_at = now() WHERE workspace_slug = $1 AND id = $2 RETURNING *`,
        [workspace, id, ...params],
      ),
    );
    if (!rows[0]) throw notFound(id);
    return toServiceAccount(rows[0]);
  }

  private nameConflict(err: unknown, name: string): unknown {
    return isUniqueViolation(err, 'service_accounts_workspace_name_key')
      ? StrataException.conflict(`Service account with name '${name}' already exists`, ErrorCode.CONFLICT)
      : err;
  }
}

/** `openid` is always held; duplicates are dropped; order is canonical. */
function normaliseScope(scope: string): string {
  const set = new Set(['openid', ...scope.split(' ').filter(Boolean)]);
  return [...set].join(' ');
}
