import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { PlanFeatures, PlanLimits } from '@strata/contracts';
import { rowsOf, type WorkspaceScope } from '@strata/db';

export interface PlanRow {
  name: string;
  description: string;
  limits: PlanLimits;
  features: PlanFeatures;
  created_at: Date;
  updated_at: Date;
}

/**
 * iam.plans, and which plan a workspace has (iam.workspaces.plan_name). Plans
 * belong to the platform, not to a workspace: only a platform administrator
 * changes them (PlansService checks). A workspace's plan is read within it.
 */
@Injectable()
export class PlansRepository {
  constructor(private readonly db: DataSource) {}

  list(): Promise<PlanRow[]> {
    return this.db.query<PlanRow[]>('SELECT * FROM iam.plans ORDER BY name');
  }

  async find(name: string): Promise<PlanRow | undefined> {
    const rows = await this.db.query<PlanRow[]>('SELECT * FROM iam.plans WHERE name = $1', [name]);
    return rows[0];
  }

  async insert(plan: {
    name: string;
    description: string;
    limits: PlanLimits;
    features: PlanFeatures;
  }): Promise<PlanRow> {
    const rows = await this.db.query<PlanRow[]>(
      'INSERT INTO iam.plans (name, description, limits, features) VALUES ($1, $2, $3, $4) RETURNING *',
      [plan.name, plan.description, JSON.stringify(plan.limits), JSON.stringify(plan.features)],
    );
    return rows[0]!;
  }

  async update(
    name: string,
    plan: { description: string; limits: PlanLimits; features: PlanFeatures },
  ): Promise<PlanRow | undefined> {
    const rows = rowsOf<PlanRow>(
      await this.db.query(
        `UPDATE iam.plans SET description = $2, limits = $3, features = $4, updated_at = now()
        WHERE name = $1 RETURNING *`,
        [name, plan.description, JSON.stringify(plan.limits), JSON.stringify(plan.features)],
      ),
    );
    return rows[0];
  }

  /** Deletes a plan no workspace has (the foreign key refuses one in use: the caller answers 409). */
  async delete(name: string): Promise<boolean> {
    const rows = rowsOf<{ name: string }>(
      await this.db.query('DELETE FROM iam.plans WHERE name = $1 RETURNING name', [name]),
    );
    return rows.length > 0;
  }

  /** How many workspaces have the plan. */
  async workspacesOn(name: string): Promise<number> {
    const [row] = await this.db.query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM iam.workspaces WHERE plan_name = $1',
      [name],
    );
    return row!.n;
  }

  /** The workspace's plan; undefined when there is no such workspace. */
  async planOf(scope: WorkspaceScope): Promise<PlanRow | undefined> {
    const rows = await this.db.query<PlanRow[]>(
      `SELECT p.* FROM iam.workspaces w JOIN iam.plans p ON p.name = w.plan_name WHERE w.slug = $1`,
      [scope.workspace],
    );
    return rows[0];
  }

  /** Gives the workspace the plan; false when there is no such workspace. */
  async assign(scope: WorkspaceScope, name: string): Promise<boolean> {
    const rows = rowsOf<{ slug: string }>(
      await this.db.query(
        'UPDATE iam.workspaces SET plan_name = $2, updated_at = now() WHERE slug = $1 RETURNING slug',
        [scope.workspace, name],
      ),
    );
    return rows.length > 0;
  }
}
