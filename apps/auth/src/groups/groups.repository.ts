import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { managerOf, rowsOf, type Tx, type WorkspaceScope } from '@strata/db';

export interface GroupRow {
  id: string;
  workspace_slug: string;
  name: string;
  description: string;
  created_at: Date;
  updated_at: Date;
}

export interface PolicyRow {
  id: string;
  group_id: string;
  resource: string;
  actions: string[];
  /** The collections a `records` policy applies to; null for every collection. */
  collections: string[] | null;
  created_at: Date;
  updated_at: Date;
}

export interface MemberRow {
  group_id: string;
  principal_type: 'user' | 'service_account';
  principal_id: string;
  created_at: Date;
}

export type PrincipalType = MemberRow['principal_type'];

/** One policy of one of a principal's groups (null when the group has none). */
export interface GrantRow {
  group_name: string;
  resource: string | null;
  actions: string[] | null;
  collections: string[] | null;
}

/**
 * iam.groups with their policies (iam.policies) and members
 * (iam.group_members). Groups carry the workspace; policies and members do
 * not, so every statement on them joins their group and requires the scope's
 * workspace on it.
 */
@Injectable()
export class GroupsRepository {
  constructor(private readonly db: DataSource) {}

  async insert(scope: WorkspaceScope, tx: Tx | undefined, group: { id: string; name: string; description: string }) {
    const rows = await managerOf(this.db, tx).query<GroupRow[]>(
      'INSERT INTO iam.groups (id, workspace_slug, name, description) VALUES ($1, $2, $3, $4) RETURNING *',
      [group.id, scope.workspace, group.name, group.description],
    );
    return rows[0]!;
  }

  list(scope: WorkspaceScope): Promise<GroupRow[]> {
    return this.db.query<GroupRow[]>('SELECT * FROM iam.groups WHERE workspace_slug = $1 ORDER BY name', [
      scope.workspace,
    ]);
  }

  async find(scope: WorkspaceScope, id: string, tx?: Tx): Promise<GroupRow | undefined> {
    const rows = await managerOf(this.db, tx).query<GroupRow[]>(
      'SELECT * FROM iam.groups WHERE workspace_slug = $1 AND id = $2',
      [scope.workspace, id],
    );
    return rows[0];
  }

  async setDescription(scope: WorkspaceScope, id: string, description: string): Promise<void> {
    await this.db.query(
      'UPDATE iam.groups SET description = $3, updated_at = now() WHERE workspace_slug = $1 AND id = $2',
      [scope.workspace, id, description],
    );
  }

  async delete(scope: WorkspaceScope, id: string): Promise<void> {
    await this.db.query('DELETE FROM iam.groups WHERE workspace_slug = $1 AND id = $2', [scope.workspace, id]);
  }

  policiesOf(scope: WorkspaceScope, groupIds: readonly string[]): Promise<PolicyRow[]> {
    return this.db.query<PolicyRow[]>(
      `SELECT p.* FROM iam.policies p JOIN iam.groups g ON g.id = p.group_id
        WHERE g.workspace_slug = $1 AND p.group_id = ANY($2) ORDER BY p.resource`,
      [scope.workspace, groupIds],
    );
  }

  membersOf(scope: WorkspaceScope, groupIds: readonly string[]): Promise<MemberRow[]> {
    return this.db.query<MemberRow[]>(
      `SELECT m.* FROM iam.group_members m JOIN iam.groups g ON g.id = m.group_id
        WHERE g.workspace_slug = $1 AND m.group_id = ANY($2) ORDER BY m.created_at`,
      [scope.workspace, groupIds],
    );
  }

  /** Adds a policy to a group of the workspace; undefined when there is no such group. */
  async addPolicy(
    scope: WorkspaceScope,
    groupId: string,
    policy: { id: string; resource: string; actions: string[]; collections: string[] | null },
  ): Promise<PolicyRow | undefined> {
    const rows = await this.db.query<PolicyRow[]>(
      `INSERT INTO iam.policies (id, group_id, resource, actions, collections)
       SELECT $3, g.id, $4, $5, $6 FROM iam.groups g WHERE g.workspace_slug = $1 AND g.id = $2 RETURNING *`,
      [scope.workspace, groupId, policy.id, policy.resource, policy.actions, policy.collections],
    );
    return rows[0];
  }

  async findPolicy(scope: WorkspaceScope, groupId: string, policyId: string): Promise<PolicyRow | undefined> {
    const rows = await this.db.query<PolicyRow[]>(
      `SELECT p.* FROM iam.policies p JOIN iam.groups g ON g.id = p.group_id
        WHERE g.workspace_slug = $1 AND p.group_id = $2 AND p.id = $3`,
      [scope.workspace, groupId, policyId],
    );
    return rows[0];
  }

  /** Sets a policy's actions and collections (null: every collection). */
  async setPolicy(
    scope: WorkspaceScope,
    groupId: string,
    policyId: string,
    policy: { actions: string[]; collections: string[] | null },
  ): Promise<PolicyRow | undefined> {
    const rows = rowsOf<PolicyRow>(
      await this.db.query(
        `UPDATE iam.policies p SET actions = $4, collections = $5, updated_at = now() FROM iam.groups g
          WHERE g.id = p.group_id AND g.workspace_slug = $1 AND p.group_id = $2 AND p.id = $3 RETURNING p.*`,
        [scope.workspace, groupId, policyId, policy.actions, policy.collections],
      ),
    );
    return rows[0];
  }

  /** Whether a policy was deleted. */
  async deletePolicy(scope: WorkspaceScope, groupId: string, policyId: string): Promise<boolean> {
    const rows = rowsOf(
      await this.db.query(
        `DELETE FROM iam.policies p USING iam.groups g
          WHERE g.id = p.group_id AND g.workspace_slug = $1 AND p.group_id = $2 AND p.id = $3 RETURNING p.id`,
        [scope.workspace, groupId, policyId],
      ),
    );
    return rows.length > 0;
  }

  /** Adds a member (again: the first addition's time stays); undefined when there is no such group. */
  async addMember(
    scope: WorkspaceScope,
    tx: Tx | undefined,
    groupId: string,
    type: PrincipalType,
    principalId: string,
  ): Promise<MemberRow | undefined> {
    const rows = await managerOf(this.db, tx).query<MemberRow[]>(
      `INSERT INTO iam.group_members (group_id, principal_type, principal_id)
       SELECT g.id, $3, $4 FROM iam.groups g WHERE g.workspace_slug = $1 AND g.id = $2
       ON CONFLICT (group_id, principal_type, principal_id) DO UPDATE SET principal_id = EXCLUDED.principal_id
       RETURNING *`,
      [scope.workspace, groupId, type, principalId],
    );
    return rows[0];
  }

  /** Whether the member was removed. */
  async removeMember(
    scope: WorkspaceScope,
    tx: Tx,
    groupId: string,
    type: string,
    principalId: string,
  ): Promise<boolean> {
    const rows = rowsOf(
      await managerOf(this.db, tx).query(
        `DELETE FROM iam.group_members m USING iam.groups g
          WHERE g.id = m.group_id AND g.workspace_slug = $1 AND m.group_id = $2
            AND m.principal_type = $3 AND m.principal_id = $4 RETURNING 1`,
        [scope.workspace, groupId, type, principalId],
      ),
    );
    return rows.length > 0;
  }

  async countUserMembers(scope: WorkspaceScope, tx: Tx, groupId: string): Promise<number> {
    const [row] = await managerOf(this.db, tx).query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM iam.group_members m JOIN iam.groups g ON g.id = m.group_id
        WHERE g.workspace_slug = $1 AND m.group_id = $2 AND m.principal_type = 'user'`,
      [scope.workspace, groupId],
    );
    return row!.n;
  }

  /** Removes a principal from every group of the workspace (its account is being deleted). */
  async removeFromAllGroups(scope: WorkspaceScope, tx: Tx, type: PrincipalType, principalId: string): Promise<void> {
    await managerOf(this.db, tx).query(
      `DELETE FROM iam.group_members m USING iam.groups g
        WHERE g.id = m.group_id AND g.workspace_slug = $1 AND m.principal_type = $2 AND m.principal_id = $3`,
      [scope.workspace, type, principalId],
    );
  }

  /** Every policy of every group of the workspace that the principal belongs to. */
  grantsOf(scope: WorkspaceScope, type: PrincipalType, principalId: string): Promise<GrantRow[]> {
    return this.db.query<GrantRow[]>(
      `SELECT g.name AS group_name, p.resource, p.actions, p.collections
         FROM iam.group_members m
         JOIN iam.groups g ON g.id = m.group_id
         LEFT JOIN iam.policies p ON p.group_id = g.id
        WHERE g.workspace_slug = $1 AND m.principal_type = $2 AND m.principal_id = $3`,
      [scope.workspace, type, principalId],
    );
  }
}
