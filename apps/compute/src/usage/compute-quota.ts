import { Injectable } from '@nestjs/common';
import type { PlanFeature } from '@strata/contracts';
import type { Tx, WorkspaceScope } from '@strata/db';
import { quotaRefusal, WorkspacePlans } from '@strata/platform';
import { ComputeUsageRepository, type CountedResource } from './usage.repository.js';

/** Whether a function or trigger fits the workspace's plan, and its features (docs/plans.md). */
@Injectable()
export class ComputeQuota {
  constructor(
    private readonly plans: WorkspacePlans,
    private readonly usage: ComputeUsageRepository,
  ) {}

  /** Refuses (403 QUOTA_EXCEEDED) one more `resource` past the plan's limit; counts under a lock held until `tx` ends. */
  async ensureRoom(scope: WorkspaceScope, tx: Tx, resource: CountedResource): Promise<void> {
    const plan = await this.plans.planOf(scope);
    if (!plan || plan.limits[resource] === null) return;
    const refusal = quotaRefusal(plan, resource, await this.usage.countLocked(scope, tx, resource));
    if (refusal) throw refusal;
  }

  /** Refuses (403 PLAN_RESTRICTED) a feature the plan turns off. */
  ensureFeature(scope: WorkspaceScope, feature: PlanFeature): Promise<void> {
    return this.plans.ensureFeature(scope, feature);
  }
}
