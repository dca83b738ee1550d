import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ADMIN_GROUP, ID_FORMATS } from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import { isUniqueViolation, rowsOf } from '@strata/db';
import { StrataException } from '@strata/platform';
import { invalidActions } from './validate-actions.js';
import { UsersService } from '../users/users.service.js';
import { ServiceAccountsService } from '../service-accounts/service-accounts.service.js';

export interface Policy {
  id: string;
  resource: string;
  actions: string[];
  createdAt: string;
  updatedAt: string;
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

interface GroupRow {
  id: string;
  workspace_slug: string;
  name: string;
  description: string;
  created_at: Date;
  updated_at: Date;
}
interface PolicyRow {
  id: string;
  group_id: string;
  resource: string;
  actions: string[];
  created_at: Date;
  updated_at: Date;
}
interface MemberRow {
  group_id: string;
  principal_type: 'user' | 'service_account';
  principal_id: string;
  created_at: Date;
}

const toPolicy = (p: PolicyRow): Policy => ({
  id: p.id,
  resource: p.resource,
  actions: p.actions,
  createdAt: p.created_at.toISOString(),
  updatedAt: p.updated_at.toISOString(),
});

/** Groups of a workspace, the policies they carry, and their members. */
@Injectable()
export class GroupsService {
  constructor(
    private readonly db: DataSource,
    private readonly users: UsersService,
    private readonly serviceAccounts: ServiceAccountsService,
  ) {}

  async create(workspace: string, input: { name: string; description?: string | undefined }): Promise<Group> {
    try {
      const rows: GroupRow[] = await this.db.query(
        'INSERT INTO iam.groups (id, workspace_slug, name, description) VALUES ($1, $2, $3, $4) RETURNING *',
        [newUuid(), workspace, input.name, input.description ?? ''],
      );
      return (await this.hydrate([rows[0]!]))[0]!;
    } catch (err) {
      if (isUniqueViolation(err, 'groups_workspace_name_key'))
        throw StrataException.conflict(`Group with name '${input.name}' already exists`);
      throw err;
    }
  }

  async list(workspace: string): Promise<Group[]> {
    const rows: GroupRow[] = await this.db.query('SELECT * FROM iam.groups WHERE workspace_slug = $1 ORDER BY name', [
      workspace,
    ]);
    return this.hydrate(rows);
  }

  async get(workspace: string, id: string): Promise<Group> {
    return (await this.hydrate([await this.row(workspace, id)]))[0]!;
  }

  async update(workspace: string, id: string, input: { description?: string | undefined }): Promise<Group> {
    await this.row(workspace, id);
    if (input.description !== undefined) {
      await this.db.query(
        'UPDATE iam.groups SET description = $3, updated_at = now() WHERE workspace_slug = $1 AND id = $2',
        [workspace, id, input.description],
      );
    }
    return this.get(workspace, id);
  }

  async delete(workspace: string, id: string): Promise<void> {
    const group = await this.row(workspace, id);
    if (group.name === ADMIN_GROUP) throw StrataException.conflict(`The group '${ADMIN_GROUP}' cannot be deleted`);
    await this.db.query('DELETE FROM iam.groups WHERE workspace_slug = $1 AND id = $2', [workspace, id]);
  }

  async addPolicy(workspace: string, groupId: string, resource: string, actions: string[]): Promise<Policy> {
    const bad = invalidActions(resource, actions);
    if (bad.length) throw StrataException.validation(bad, 'Invalid policy actions');
    await this.row(workspace, groupId);
    try {
      const rows: PolicyRow[] = await this.db.query(
        'INSERT INTO iam.policies (id, group_id, resource, actions) VALUES ($1, $2, $3, $4) RETURNING *',
        [newUuid(), groupId, resource, actions],
      );
      return toPolicy(rows[0]!);
    } catch (err) {
      if (isUniqueViolation(err, 'policies_group_resource_key')) {
        throw StrataException.conflict(`The group already has a policy on '${resource}'; update that policy instead`);
      }
      throw err;
    }
  }

  async updatePolicy(workspace: string, groupId: string, policyId: string, actions: string[]): Promise<Policy> {
    await this.row(workspace, groupId);
    const existing: PolicyRow[] = await this.db.query('SELECT * FROM iam.policies WHERE group_id = $1 AND id = $2', [
      groupId,
      policyId,
    ]);
    if (!existing[0]) throw StrataException.notFound(`Policy ${policyId} not found`);
    const bad = invalidActions(existing[0].resource, actions);
    if (bad.length) throw StrataException.validation(bad, 'Invalid policy actions');
    const rows = rowsOf<PolicyRow>(
      await this.db.query(
        'UPDATE iam.policies SET actions = $3, updated_at = now() WHERE group_id = $1 AND id = $2 RETURNING *',
        [groupId, policyId, actions],
      ),
    );
    return toPolicy(rows[0]!);
  }

  async deletePolicy(workspace: string, groupId: string, policyId: string): Promise<void> {
    await this.row(workspace, groupId);
    const rows = rowsOf(
      await this.db.query('DELETE FROM iam.policies WHERE group_id = $1 AND id = $2 RETURNING id', [groupId, policyId]),
    );
    if (!rows.length) throw StrataException.notFound(`Policy ${policyId} not found`);
  }

  async addMember(
    workspace: string,
    groupId: string,
    input: { type: 'user' | 'service_account'; id?: string | undefined; email?: string | undefined },
  ): Promise<Member> {
    await this.row(workspace, groupId);
    const { type } = input;
    const principalId = await this.principalIdOf(workspace, input);
    const rows: MemberRow[] = await this.db.query(
      `INSERT INTO iam.group_members (group_id, principal_type, principal_id) VALUES ($1, $2, $3)
       ON CONFLICT (group_id, principal_type, principal_id) DO UPDATE SET principal_id = EXCLUDED.principal_id
       RETURNING *`,
      [groupId, type, principalId],
    );
    return { type, id: principalId, addedAt: rows[0]!.created_at.toISOString() };
  }

  async removeMember(workspace: string, groupId: string, type: string, principalId: string): Promise<void> {
    const group = await this.row(workspace, groupId);
    await this.db.transaction(async (tx) => {
      const removed = rowsOf(
        await tx.query(
          'DELETE FROM iam.group_members WHERE group_id = $1 AND principal_type = $2 AND principal_id = $3 RETURNING 1',
          [groupId, type, principalId],
        ),
      );
      if (!removed.length) throw StrataException.notFound(`Member ${type}:${principalId} not found in the group`);
      if (group.name === ADMIN_GROUP) {
        const [{ n }] = await tx.query<[{ n: number }]>(
          `SELECT count(*)::int AS n FROM iam.group_members WHERE group_id = $1 AND principal_type = 'user'`,
          [groupId],
        );
        if (n === 0) throw StrataException.conflict(`The last user of '${ADMIN_GROUP}' cannot be removed`);
      }
    });
  }

  /** The stored id of a member: a user's id (found by id or email) or a service account's client id. */
  private async principalIdOf(
    workspace: string,
    input: { type: 'user' | 'service_account'; id?: string | undefined; email?: string | undefined },
  ): Promise<string> {
    if (input.type === 'service_account') {
      const account = await this.serviceAccounts.findByClientId(workspace, input.id ?? '');
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

  private async row(workspace: string, id: string): Promise<GroupRow> {
    if (!ID_FORMATS.uuid.test(id)) throw StrataException.notFound(`Group ${id} not found`);
    const rows: GroupRow[] = await this.db.query('SELECT * FROM iam.groups WHERE workspace_slug = $1 AND id = $2', [
      workspace,
      id,
    ]);
    if (!rows[0]) throw StrataException.notFound(`Group ${id} not found`);
    return rows[0];
  }

  private async hydrate(groups: GroupRow[]): Promise<Group[]> {
    if (groups.length === 0) return [];
    const ids = groups.map((g) => g.id);
    const [policies, members]: [PolicyRow[], MemberRow[]] = await Promise.all([
      this.db.query<PolicyRow[]>('SELECT * FROM iam.policies WHERE group_id = ANY($1) ORDER BY resource', [ids]),
      this.db.query<MemberRow[]>('SELECT * FROM iam.group_members WHERE group_id = ANY($1) ORDER BY created_at', [ids]),
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
