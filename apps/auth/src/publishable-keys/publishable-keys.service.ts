import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isResource, PUBLISHABLE_ACTIONS, type FieldError } from '@strata/contracts';
import { hashToken, newPublishableKey, newUuid } from '@strata/crypto';
import { rowsOf } from '@strata/db';
import { StrataException } from '@strata/platform';

export interface PublishableKey {
  id: string;
  name: string;
  prefix: string;
  permissions: string[];
  workspace: string;
  createdAt: string;
  createdBy: string;
  revokedAt: string | null;
}

interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  permissions: string[];
  workspace_slug: string;
  created_at: Date;
  created_by: string;
  revoked_at: Date | null;
}

const toKey = (r: KeyRow): PublishableKey => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  permissions: r.permissions,
  workspace: r.workspace_slug,
  createdAt: r.created_at.toISOString(),
  createdBy: r.created_by,
  revokedAt: r.revoked_at?.toISOString() ?? null,
});

/** Resources a browser-safe key may never read. */
const NEVER_PUBLIC = new Set(['secrets', 'service-accounts', 'groups', 'publishable-keys']);

/** Checks that every permission is a read on a public-safe resource. Pure. */
export function invalidPublishablePermissions(permissions: readonly string[]): FieldError[] {
  const errors: FieldError[] = [];
  permissions.forEach((p, i) => {
    const [resource = '', action = ''] = p.split(':');
    if (!isResource(resource) || NEVER_PUBLIC.has(resource)) {
      errors.push({ field: `permissions[${i}]`, message: `'${resource}' cannot be granted to a publishable key` });
    } else if (!PUBLISHABLE_ACTIONS.includes(action as never)) {
      errors.push({
        field: `permissions[${i}]`,
        message: `publishable keys are read-only: action must be one of ${PUBLISHABLE_ACTIONS.join(', ')}`,
      });
    }
  });
  return errors;
}

/** Browser-safe keys: only the hash and a display prefix are kept; the key is shown once. */
@Injectable()
export class PublishableKeysService {
  constructor(private readonly db: DataSource) {}

  async create(
    workspace: string,
    createdBy: string,
    name: string,
    permissions: string[],
  ): Promise<PublishableKey & { key: string }> {
    const bad = invalidPublishablePermissions(permissions);
    if (bad.length) throw StrataException.validation(bad, 'Invalid publishable key permissions');
    const key = newPublishableKey();
    const rows: KeyRow[] = await this.db.query(
      `INSERT INTO iam.publishable_keys (id, workspace_slug, name, prefix, key_hash, permissions, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [newUuid(), workspace, name, key.slice(0, 16), hashToken(key), [...new Set(permissions)], createdBy],
    );
    return { ...toKey(rows[0]!), key };
  }

  async list(workspace: string): Promise<PublishableKey[]> {
    const rows: KeyRow[] = await this.db.query(
      'SELECT * FROM iam.publishable_keys WHERE workspace_slug = $1 ORDER BY created_at',
      [workspace],
    );
    return rows.map(toKey);
  }

  async revoke(workspace: string, id: string): Promise<PublishableKey> {
    const rows = rowsOf<KeyRow>(
      await this.db.query(
        `UPDATE iam.publishable_keys SET revoked_at = coalesce(revoked_at, now()) WHERE workspace_slug = $1 AND id = $2 RETURNING *`,
        [workspace, id],
      ),
    );
    if (!rows[0]) throw StrataException.notFound(`Publishable key ${id} not found`);
    return toKey(rows[0]);
  }
}
