import { Injectable } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';
import { PublishableKeysRepository, type KeyRow } from './publishable-keys.repository.js';
import { isResource, PUBLISHABLE_ACTIONS, type FieldError } from '@strata/contracts';
import { hashToken, newPublishableKey, newUuid } from '@strata/crypto';
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
  constructor(private readonly keys: PublishableKeysRepository) {}

  async create(
    scope: WorkspaceScope,
    createdBy: string,
    name: string,
    permissions: string[],
  ): Promise<PublishableKey & { key: string }> {
    const bad = invalidPublishablePermissions(permissions);
    if (bad.length) throw StrataException.validation(bad, 'Invalid publishable key permissions');
    const key = newPublishableKey();
    const row = await this.keys.insert(scope, {
      id: newUuid(),
      name,
      prefix: key.slice(0, 16),
      hash: hashToken(key),
      permissions: [...new Set(permissions)],
      createdBy,
    });
    return { ...toKey(row), key };
  }

  async list(scope: WorkspaceScope): Promise<PublishableKey[]> {
    return (await this.keys.list(scope)).map(toKey);
  }

  async revoke(scope: WorkspaceScope, id: string): Promise<PublishableKey> {
    const row = await this.keys.revoke(scope, id);
    if (!row) throw StrataException.notFound(`Publishable key ${id} not found`);
    return toKey(row);
  }
}
