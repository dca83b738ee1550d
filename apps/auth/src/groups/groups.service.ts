import { Injectable } from '@nestjs/common';
import { ADMIN_GROUP, ID_FORMATS, type FieldError } from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import { isUniqueViolation, Transactions, type WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import { invalidActions, invalidCollections, policyWarnings } from './validate-actions.js';
import { UsersService } from '../users/users.service.js';
import { ServiceAccountsService } from '../service-accounts/service-accounts.service.js';
import { GroupsRepository, type GroupRow, type PolicyRow } from './groups.repository.js';

export interface Policy {
  id: string;
  resource: string;
  actions: string[];
  /** `records` only: the collections (slugs) the actions apply to; null for every collection. */
  collections: string[] | null;
  createdAt: string;
  updatedAt: string;
  /** What the policy grants that its writer may not expect (`read` grants nothing); absent when none. */
  warnings?: FieldError[];
}

export interface Member {
  type: 'user' | 'service_account';
  id: string;
  addedAt: string;
}

export interface Group {
  id: string;
  workspace: string;
  name: string;
  description: string;
  policies: Policy[];
  members: Member[];
  createdAt: string;
  updatedAt: string;
}

const toPolicy = (p: PolicyRow): Policy => {
  const warnings = policyWarnings(p.actions);
  return {
    id: p.id,
    resource: p.resource,
    actions: p.actions,
    collections: p.collections,
    createdAt: p.created_at.toISOString(),
    updatedAt: p.updated_at.toISOString(),
    ...(warnings.length ? { warnings } : {}),
  };
};

/** Groups of a workspace, the policies they carry, and their members. */
@Injectable()
export class GroupsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly groups: GroupsRepository,
    private readonly users: UsersService,
    private readonly serviceAccounts: ServiceAccountsService,
  ) {}

  async create(scope: WorkspaceScope, input: { name: string; description?: string | undefined }): Promise<Group> {
    try {
      const row = await this.groups.insert(scope, undefined, {
        id: newUuid(),
        name: input.name,
        description: input.description ?? '',
      });
      return (await this.hydrate(scope, [row]))[0]!;
    } catch (err) {
      if (isUniqueViolation(err, 'groups_workspace_name_key'))
        throw StrataException.conflict(`Group with name '${input.name}' already exists`);
      throw err;
    }
  }

  async list(scope: WorkspaceScope): Promise<Group[]> {
    return this.hydrate(scope, await this.groups.list(scope));
  }

  async get(scope: WorkspaceScope, id: string): Promise<Group> {
    return (await this.hydrate(scope, [await this.row(scope, id)]))[0]!;
  }

  async update(scope: WorkspaceScope, id: string, input: { description?: string | undefined }): Promise<Group> {
    await this.row(scope, id);
    if (input.description !== undefined) await this.groups.setDescription(scope, id, input.description);
    return this.get(scope, id);
  }

  async delete(scope: WorkspaceScope, id: string): Promise<void> {
    const group = await this.row(scope, id);
    if (group.name === ADMIN_GROUP) throw StrataException.conflict(`The group '${ADMIN_GROUP}' cannot be deleted`);
    await this.groups.delete(scope, id);
  }

  async addPolicy(
    scope: WorkspaceScope,
    groupId: string,
    policy: { resource: string; actions: string[]; collections?: string[] | null | undefined },
  ): Promise<Policy> {
    const { resource, actions } = policy;
    const collections = policy.collections ?? null;
    const bad = [...invalidActions(resource, actions), ...invalidCollections(resource, collections)];
    if (bad.length) throw StrataException.validation(bad, 'Invalid policy');
    await this.row(scope, groupId);
    try {
      const row = await this.groups.addPolicy(scope, groupId, { id: newUuid(), resource, actions, collections });
      if (!row) throw StrataException.notFound(`Group ${groupId} not found`);
      return toPolicy(row);
    } catch (err) {
      if (isUniqueViolation(err, 'policies_group_resource_key')) {
        throw StrataException.conflict(`The group already has a policy on '${resource}'; update that policy instead`);
      }
      throw err;
    }
  }

  /** Replaces a policy's actions; its collections too when `collections` is given (null: every collection). */
  async updatePolicy(
    scope: WorkspaceScope,
    groupId: string,
    policyId: string,
    update: { actions: string[]; collections?: string[] | null | undefined },
  ): Promise<Policy> {
    await this.row(scope, groupId);
    const existing = await this.groups.findPolicy(scope, groupId, policyId);
    if (!existing) throw StrataException.notFound(`Policy ${policyId} not found`);
    // Omitted, the policy keeps its collections: a PUT of the actions alone never widens it.
    const collections = update.collections === undefined ? existing.collections : update.collections;
    const bad = [
      ...invalidActions(existing.resource, update.actions),
      ...invalidCollections(existing.resource, update.collections),
    ];
    if (bad.length) throw StrataException.validation(bad, 'Invalid policy');
    const row = await this.groups.setPolicy(scope, groupId, policyId, { actions: update.actions, collections });
    if (!row) throw StrataException.notFound(`Policy ${policyId} not found`);
    return toPolicy(row);
  }

  async deletePolicy(scope: WorkspaceScope, groupId: string, policyId: string): Promise<void> {
    await this.row(scope, groupId);
    if (!(await this.groups.deletePolicy(scope, groupId, policyId))) {
      throw StrataException.notFound(`Policy ${policyId} not found`);
    }
  }

  async addMember(
    scope: WorkspaceScope,
    groupId: string,
    input: { type: 'user' | 'service_account'; id?: string | undefined; email?: string | undefined },
  ): Promise<Member> {
    await this.row(scope, groupId);
    const { type } = input;
    const principalId = await this.principalIdOf(scope, input);
    const row = await this.groups.addMember(scope, undefined, groupId, type, principalId);
    if (!row) throw StrataException.notFound(`Group ${groupId} not found`);
    return { type, id: principalId, addedAt: row.created_at.toISOString() };
  }

  async removeMember(scope: WorkspaceScope, groupId: string, type: string, principalId: string): Promise<void> {
    const group = await this.row(scope, groupId);
    await this.transactions.run(async (tx) => {
      if (!(await this.groups.removeMember(scope, tx, groupId, type, principalId))) {
        throw StrataException.notFound(`Member ${type}:${principalId} not found in the group`);
      }
      if (group.name === ADMIN_GROUP && (await this.groups.countUserMembers(scope, tx, groupId)) === 0) {
        throw StrataException.conflict(`The last user of '${ADMIN_GROUP}' cannot be removed`);
      }
    });
  }

  /** The stored id of a member: a user's id (found by id or email) or a service account's client id. */
  private async principalIdOf(
    scope: WorkspaceScope,
    input: { type: 'user' | 'service_account'; id?: string | undefined; email?: string | undefined },
  ): Promise<string> {
    if (input.type === 'service_account') {
      const account = await this.serviceAccounts.findByClientId(scope, input.id ?? '');
      if (!account) throw StrataException.notFound(`Service account '${input.id}' not found in this workspace`);
      return account.client_id;
    }
    const user =
      input.id !== undefined
        ? ID_FORMATS.uuid.test(input.id)
          ? await this.users.findById(input.id)
          : undefined
        : await this.users.findByEmail(input.email ?? '');
    if (!user) throw StrataException.notFound(`User '${input.id ?? input.email}' not found`);
    return user.id;
  }

  private async row(scope: WorkspaceScope, id: string): Promise<GroupRow> {
    if (!ID_FORMATS.uuid.test(id)) throw StrataException.notFound(`Group ${id} not found`);
    const row = await this.groups.find(scope, id);
    if (!row) throw StrataException.notFound(`Group ${id} not found`);
    return row;
  }

  private async hydrate(scope: WorkspaceScope, groups: GroupRow[]): Promise<Group[]> {
    if (groups.length === 0) return [];
    const ids = groups.map((g) => g.id);
    const [policies, members] = await Promise.all([
      this.groups.policiesOf(scope, ids),
      this.groups.membersOf(scope, ids),
    ]);
    return groups.map((g) => ({
      id: g.id,
      workspace: g.workspace_slug,
      name: g.name,
      description: g.description,
      policies: policies.filter((p) => p.group_id === g.id).map(toPolicy),
      members: members
        .filter((m) => m.group_id === g.id)
        .map((m) => ({ type: m.principal_type, id: m.principal_id, addedAt: m.created_at.toISOString() })),
      createdAt: g.created_at.toISOString(),
      updatedAt: g.updated_at.toISOString(),
    }));
  }
}
