import { Injectable, Logger } from '@nestjs/common';
import type { Tx, WorkspaceScope } from '@strata/db';
import { Clock, quotaRefusal, WorkspacePlans, type StrataException } from '@strata/platform';
import { ComputeUsageRepository } from './usage.repository.js';

/** How long a workspace's count of this month's executions is reused before it is read again. */
const REUSE_MS = 1000;
/** Workspaces whose count a replica keeps at once (the oldest go first). */
const KEPT = 10_000;

/** The first day of the clock's month (UTC), as the counters key it: `YYYY-MM-01`. Pure. */
export function monthOf(at: Date): string {
  return `${at.toISOString().slice(0, 7)}-01`;
}

/**
 * The plan's `functionExecutionsPerMonth` (docs/plans.md): whether one more run
 * may start in the workspace this calendar month (UTC, by the service's clock).
 * The count comes from the counters the runs' inserts keep; a replica reuses it
 * for a second, adding the starts it allowed meanwhile, so a burst of starts
 * costs one read a second: starts on several replicas in that second may pass
 * the limit together by a few (documented). When the auth service cannot be
 * asked the plan, runs are allowed, as the per-minute counter allows them.
 */
@Injectable()
export class MonthlyExecutions {
  private readonly logger = new Logger('MonthlyExecutions');
  private readonly kept = new Map<string, { month: string; readAt: number; usage: number }>();

  constructor(
    private readonly plans: WorkspacePlans,
    private readonly usage: ComputeUsageRepository,
    private readonly clock: Clock,
  ) {}

  /** The refusal of one more run this month, or undefined (counted as allowed). */
  async refusal(scope: WorkspaceScope, tx?: Tx): Promise<StrataException | undefined> {
    let plan;
    try {
      plan = await this.plans.planOf(scope);
    } catch (err) {
      // As the per-minute counter: runs are not stopped because the plan cannot be asked now.
      this.logger.warn({ msg: "workspace's plan unknown; run allowed", workspace: scope.workspace, err: String(err) });
      return undefined;
    }
    if (!plan || plan.limits.functionExecutionsPerMonth === null) return undefined;
    const month = monthOf(this.clock.now());
    const now = performance.now();
    let held = this.kept.get(scope.workspace);
    if (!held || held.month !== month || now - held.readAt > REUSE_MS) {
      held = { month, readAt: now, usage: await this.usage.executions(scope, month, tx) };
      this.kept.delete(scope.workspace);
      if (this.kept.size >= KEPT) this.kept.delete(this.kept.keys().next().value!);
      this.kept.set(scope.workspace, held);
    }
    const refused = quotaRefusal(plan, 'functionExecutionsPerMonth', held.usage);
    if (!refused) held.usage++;
    return refused;
  }

  /** Throws the refusal (403 QUOTA_EXCEEDED) of one more run this month. */
  async ensureRoom(scope: WorkspaceScope): Promise<void> {
    const refused = await this.refusal(scope);
    if (refused) throw refused;
  }

  /** This month's count, for the usage page. */
  thisMonth(scope: WorkspaceScope): Promise<number> {
    return this.usage.executions(scope, monthOf(this.clock.now()));
  }
}
