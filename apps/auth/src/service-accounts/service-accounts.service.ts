import { Injectable } from '@nestjs/common';
import { ErrorCode } from '@strata/contracts';
import {
  constantTimeEqual,
  hashToken,
  isFunctionPrincipalClientId,
  newClientId,
  newClientSecret,
} from '@strata/crypto';
import { isUniqueViolation, Transactions, type WorkspaceScope } from '@strata/db';
import { quotaRefusal, StrataException } from '@strata/platform';
import { PlansService } from '../plans/plans.service.js';
import {
  ServiceAccountsRepository,
  type ServiceAccountChange,
  type ServiceAccountRow,
} from './service-accounts.repository.js';

export type { ServiceAccountRow } from './service-accounts.repository.js';

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

/** Whether `secret` is the one whose SHA-256 is `secretHash`, compared in constant time. */
export function secretMatches(secretHash: string, secret: string): boolean {
  return constantTimeEqual(hashToken(secret), secretHash);
}

const notFound = (id: number): StrataException => StrataException.notFound(`Service account ${id} not found`);

/**
 * Machine clients of one workspace. The secret is shown on create and rotate
 * only; the database keeps its SHA-256 (the secret is 256 random bits).
 */
@Injectable()
export class ServiceAccountsService {
  constructor(
    private readonly accounts: ServiceAccountsRepository,
    private readonly transactions: Transactions,
    private readonly plans: PlansService,
  ) {}

  async create(
    scope: WorkspaceScope,
    createdBy: string,
    input: {
      name: string;
      description?: string | undefined;
      grant_types?: string[] | undefined;
      scope?: string | undefined;
    },
  ): Promise<ServiceAccountWithSecret> {
    const secret = newClientSecret();
    const plan = await this.plans.planOf(scope);
    try {
      const row = await this.transactions.run(async (tx) => {
        // Within the workspace's plan (docs/plans.md): counted under a lock, so two creates never pass it together.
        if (plan && plan.limits.serviceAccounts !== null) {
          const refusal = quotaRefusal(plan, 'serviceAccounts', await this.accounts.countLocked(scope, tx));
          if (refusal) throw refusal;
        }
        return this.accounts.insert(
          scope,
          {
            clientId: newClientId(),
            secretHash: hashToken(secret),
            name: input.name,
            description: input.description ?? '',
            grantTypes: input.grant_types ?? ['client_credentials'],
            scope: normaliseScope(input.scope ?? 'openid'),
            createdBy,
          },
          tx,
        );
      });
      return { ...toServiceAccount(row), clientSecret: secret };
    } catch (err) {
      throw this.nameConflict(err, input.name);
    }
  }

  async list(
    scope: WorkspaceScope,
    page: number,
    limit: number,
  ): Promise<{ data: ServiceAccount[]; meta: { total: number; page: number; limit: number } }> {
    const { rows, total } = await this.accounts.page(scope, limit, (page - 1) * limit);
    return { data: rows.map(toServiceAccount), meta: { total, page, limit } };
  }

  async get(scope: WorkspaceScope, id: number): Promise<ServiceAccount> {
    const row = await this.accounts.find(scope, id);
    if (!row) throw notFound(id);
    return toServiceAccount(row);
  }

  async rename(scope: WorkspaceScope, id: number, name: string): Promise<ServiceAccount> {
    try {
      return await this.update(scope, id, { kind: 'name', value: name });
    } catch (err) {
      throw this.nameConflict(err, name);
    }
  }

  describe(scope: WorkspaceScope, id: number, description: string): Promise<ServiceAccount> {
    return this.update(scope, id, { kind: 'description', value: description });
  }

  /** Replaces the secret: the old one fails from this commit on. */
  async rotate(scope: WorkspaceScope, id: number): Promise<ServiceAccountWithSecret> {
    const current = await this.accounts.find(scope, id);
    if (!current) throw notFound(id);
    if (isFunctionPrincipalClientId(current.client_id)) {
      throw StrataException.validation(
        [{ field: 'id', message: 'is the function principal, whose secret follows STRATA_FUNCTIONS_PRINCIPAL_KEY' }],
        "The function principal's secret cannot be rotated here: change STRATA_FUNCTIONS_PRINCIPAL_KEY (docs/compute.md)",
      );
    }
    const secret = newClientSecret();
    const account = await this.update(scope, id, { kind: 'secretHash', value: hashToken(secret) });
    return { ...account, clientSecret: secret };
  }

  /** Disables the account: token requests fail at once, issued tokens within the permission cache time. */
  revoke(scope: WorkspaceScope, id: number): Promise<ServiceAccount> {
    return this.update(scope, id, { kind: 'revoked' });
  }

  /** Deletes the account and takes it out of every group of the workspace. */
  async delete(scope: WorkspaceScope, id: number): Promise<void> {
    if (!(await this.accounts.delete(scope, id))) throw notFound(id);
  }

  /** Whether `secret` is the secret of the active account `clientId` names (the token endpoint's check). */
  async authenticates(clientId: string, secret: string): Promise<boolean> {
    const account = await this.accounts.findActiveByClientId(clientId);
    return account !== undefined && secretMatches(account.secret_hash, secret);
  }

  /** The active account a client id names, for token issuance and permission resolution. */
  findActiveByClientId(clientId: string): Promise<ServiceAccountRow | undefined> {
    return this.accounts.findActiveByClientId(clientId);
  }

  findByClientId(scope: WorkspaceScope, clientId: string): Promise<ServiceAccountRow | undefined> {
    return this.accounts.findByClientId(scope, clientId);
  }

  private async update(scope: WorkspaceScope, id: number, change: ServiceAccountChange): Promise<ServiceAccount> {
    const row = await this.accounts.update(scope, id, change);
    if (!row) throw notFound(id);
    return toServiceAccount(row);
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
