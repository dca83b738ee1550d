import { Injectable } from '@nestjs/common';
import { DEFAULT_PLAN, ErrorCode, type Plan, type WorkspacePlan } from '@strata/contracts';
import { isUniqueViolation, type WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import { UsersRepository } from '../users/users.repository.js';
import type { CreatePlanRequest, UpdatePlanRequest } from './dto/plan.requests.js';
import { PlanNotices } from './plan-notices.js';
import {
  ALL_FEATURES,
  featuresOf,
  limitsOf,
  mergeFeatures,
  mergeLimits,
  OPEN_LIMITS,
  toPlan,
  toWorkspacePlan,
} from './plan-view.js';
import { PlansRepository } from './plans.repository.js';

const planNotFound = (name: string): StrataException =>
  StrataException.notFound(`Plan '${name}' not found`, ErrorCode.NOT_FOUND);

/**
 * Plans and the plan of each workspace (docs/plans.md). Only a platform
 * administrator reads or changes them here; the services learn a workspace's
 * plan through PlansDirectory.
 */
@Injectable()
export class PlansService {
  constructor(
    private readonly plans: PlansRepository,
    private readonly users: UsersRepository,
    private readonly notices: PlanNotices,
  ) {}

  /** Refuses (403 PERMISSION_DENIED) a user who is not a platform administrator. */
  async requireAdmin(userId: string): Promise<void> {
    const user = await this.users.findById(userId);
    if (user?.is_platform_admin !== true) {
      throw StrataException.forbidden('Only a platform administrator manages plans');
    }
  }

  async list(): Promise<Plan[]> {
    return (await this.plans.list()).map(toPlan);
  }

  async get(name: string): Promise<Plan> {
    const row = await this.plans.find(name);
    if (!row) throw planNotFound(name);
    return toPlan(row);
  }

  async create(input: CreatePlanRequest): Promise<Plan> {
    try {
      return toPlan(
        await this.plans.insert({
          name: input.name,
          description: input.description ?? '',
          limits: mergeLimits(OPEN_LIMITS, input.limits),
          features: mergeFeatures(ALL_FEATURES, input.features),
        }),
      );
    } catch (err) {
      if (isUniqueViolation(err, 'plans_pkey')) throw StrataException.conflict(`Plan '${input.name}' already exists`);
      throw err;
    }
  }

  /** Lays the given fields over the plan's; the workspaces on it get the change at once. */
  async update(name: string, input: UpdatePlanRequest): Promise<Plan> {
    const row = await this.plans.find(name);
    if (!row) throw planNotFound(name);
    const updated = await this.plans.update(name, {
      description: input.description ?? row.description,
      limits: mergeLimits(limitsOf(row.limits), input.limits),
      features: mergeFeatures(featuresOf(row.features), input.features),
    });
    if (!updated) throw planNotFound(name);
    await this.notices.changed({});
    return toPlan(updated);
  }

  /** Deletes a plan no workspace has; the default plan stays. */
  async delete(name: string): Promise<void> {
    if (name === DEFAULT_PLAN) throw StrataException.conflict(`The '${DEFAULT_PLAN}' plan cannot be deleted`);
    if (!(await this.plans.find(name))) throw planNotFound(name);
    const on = await this.plans.workspacesOn(name);
    if (on > 0) {
      throw StrataException.conflict(
        `Plan '${name}' is the plan of ${on} workspace${on === 1 ? '' : 's'}: give them another plan first`,
      );
    }
    try {
      if (!(await this.plans.delete(name))) throw planNotFound(name);
    } catch (err) {
      // A workspace was given the plan meanwhile (the foreign key refuses).
      if ((err as { code?: unknown }).code === '23503') {
        throw StrataException.conflict(`Plan '${name}' is the plan of a workspace: give it another plan first`);
      }
      throw err;
    }
  }

  /** Gives the workspace the plan; its services apply it at once. */
  async assign(scope: WorkspaceScope, name: string): Promise<WorkspacePlan> {
    const plan = await this.plans.find(name);
    if (!plan)
      throw StrataException.unprocessable(`Plan '${name}' not found`, [
        { field: 'plan', message: `Plan '${name}' not found` },
      ]);
    try {
      if (!(await this.plans.assign(scope, name))) {
        throw StrataException.notFound(`Workspace '${scope.workspace}' not found`);
      }
    } catch (err) {
      if ((err as { code?: unknown }).code === '23503') throw StrataException.unprocessable(`Plan '${name}' not found`);
      throw err;
    }
    await this.notices.changed({ workspaceSlug: scope.workspace });
    return toWorkspacePlan(scope.workspace, plan);
  }

  /** The workspace's plan; undefined when there is no such workspace. */
  async planOf(scope: WorkspaceScope): Promise<WorkspacePlan | undefined> {
    const row = await this.plans.planOf(scope);
    return row && toWorkspacePlan(scope.workspace, row);
  }
}
