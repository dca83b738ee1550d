import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import {
  ErrorCode,
  plansChangedSubject,
  workspacePlanSubject,
  type PlanFeature,
  type PlanLimit,
  type PlansChanged,
  type WorkspacePlan,
  type WorkspacePlanReply,
} from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { ServiceConfig } from '../config/service-config.js';
import { StrataException } from '../errors/strata.exception.js';
import { NatsConnectionHolder } from '../nats/nats.provider.js';
import { featureRefusal, quotaRefusal } from './plan-refusals.js';

const LOOKUP_TIMEOUT_MS = 5000;
/** Workspaces whose plan a replica keeps at once (the oldest go first). */
const KEPT = 10_000;

/**
 * Each workspace's plan (docs/plans.md), asked of the auth service over core
 * NATS request/reply and kept for PLAN_CACHE_TTL_MS; the auth service's notice
 * that a plan changed drops what is kept at once. A service counts its own
 * resources and asks this whether a create fits.
 */
@Injectable()
export class WorkspacePlans implements OnApplicationShutdown {
  private readonly logger = new Logger('WorkspacePlans');
  private readonly kept = new Map<string, { until: number; plan: Promise<WorkspacePlan | undefined> }>();
  private listening: Promise<Subscription> | undefined;

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly config: ServiceConfig,
  ) {}

  /**
   * The workspace's plan; undefined when the auth service knows no such
   * workspace. Throws 503 UNAVAILABLE when the auth service does not answer.
   */
  async planOf(scope: WorkspaceScope): Promise<WorkspacePlan | undefined> {
    await this.listen();
    const now = performance.now();
    const hit = this.kept.get(scope.workspace);
    if (hit && hit.until > now) return hit.plan;
    const plan = this.ask(scope.workspace);
    this.kept.delete(scope.workspace);
    if (this.kept.size >= KEPT) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(scope.workspace, { until: now + this.config.PLAN_CACHE_TTL_MS, plan });
    plan.catch(() => {
      if (this.kept.get(scope.workspace)?.plan === plan) this.kept.delete(scope.workspace);
    });
    return plan;
  }

  /**
   * Throws 429/403 `QUOTA_EXCEEDED` (docs/plans.md) when `adding` more of
   * `resource` would pass the plan's limit; `usage` counts what the workspace
   * holds, and is called only when the plan has a limit.
   */
  async ensureRoom(
    scope: WorkspaceScope,
    resource: PlanLimit,
    usage: () => Promise<number>,
    adding = 1,
  ): Promise<void> {
    const plan = await this.planOf(scope);
    if (!plan || plan.limits[resource] === null || adding <= 0) return;
    const refusal = quotaRefusal(plan, resource, await usage(), adding);
    if (refusal) throw refusal;
  }

  /** Throws 403 `PLAN_RESTRICTED` when the workspace's plan turns `feature` off. */
  async ensureFeature(scope: WorkspaceScope, feature: PlanFeature): Promise<void> {
    const plan = await this.planOf(scope);
    const refusal = plan && featureRefusal(plan, feature);
    if (refusal) throw refusal;
  }

  private async ask(workspace: string): Promise<WorkspacePlan | undefined> {
    let reply: WorkspacePlanReply;
    try {
      const nc = await this.nats.get();
      const msg = await nc.request(
        workspacePlanSubject(this.config.NATS_PREFIX),
        JSON.stringify({ workspaceSlug: workspace }),
        { timeout: LOOKUP_TIMEOUT_MS },
      );
      reply = msg.json<WorkspacePlanReply>();
    } catch (err) {
      this.logger.warn({
        msg: "a workspace's plan could not be asked of the auth service",
        workspace,
        err: String(err),
      });
      throw new StrataException(ErrorCode.UNAVAILABLE, "The auth service cannot be reached for the workspace's plan");
    }
    if (typeof reply !== 'object' || reply === null || typeof (reply as { found?: unknown }).found !== 'boolean') {
      throw new StrataException(ErrorCode.UNAVAILABLE, "The auth service could not answer the workspace's plan");
    }
    return reply.found ? reply.plan : undefined;
  }

  /** Follows the auth service's change notices from the first lookup on. */
  private async listen(): Promise<void> {
    this.listening ??= this.nats.get().then(async (nc) => {
      const sub = nc.subscribe(plansChangedSubject(this.config.NATS_PREFIX), {
        callback: (err, msg) => {
          if (err) return;
          let notice: Partial<PlansChanged> | undefined;
          try {
            notice = msg.json<Partial<PlansChanged>>();
          } catch {
            return;
          }
          if (typeof notice?.workspaceSlug === 'string') this.kept.delete(notice.workspaceSlug);
          else this.kept.clear();
        },
      });
      await nc.flush();
      return sub;
    });
    try {
      await this.listening;
    } catch (err) {
      this.listening = undefined;
      throw new StrataException(ErrorCode.UNAVAILABLE, `NATS cannot be reached for plan changes (${String(err)})`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const listening = this.listening;
    this.listening = undefined;
    await listening?.then((s) => s.unsubscribe()).catch(() => undefined);
  }
}
