import { Injectable } from '@nestjs/common';
import type { PlanFeature } from '@strata/contracts';
import type { Tx, WorkspaceScope } from '@strata/db';
import { WorkspacePlans } from '@strata/platform';
import { ComputeUsageRepository, type CountedResource } from './usage.repository.js';

/** Whether a function or trigger fits the workspace's plan, and its features (docs/plans.md). */
@Injectable()
export class ComputeQuota {
  constructor(
    private readonly plans: WorkspacePlans,
    private readonly usage: ComputeUsageRepository,
  ) {}

  /** Refuses (403 QUOTA_EXCEEDED) one more `resource` past the plan's limit; counts under a lock held until `tx` ends. */
  ensureRoom(scope: WorkspaceScope, tx: Tx, resource: CountedResource): Promise<void> {
    return this.plans.ensureRoom(scope, resource, () => this.usage.countLocked(scope, tx, resource));
  }

  /** Refuses (403 PLAN_RESTRICTED) a feature the plan turns off. */
  ensureFeature(scope: WorkspaceScope, feature: PlanFeature): Promise<void> {
    return this.plans.ensureFeature(scope, feature);
  }
}
