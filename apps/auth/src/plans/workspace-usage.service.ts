import { Injectable, Logger } from '@nestjs/common';
import {
  ErrorCode,
  PLAN_LIMITS,
  USAGE_SERVICES,
  usageSubject,
  type PlanFeatures,
  type PlanLimit,
  type UsageReply,
  type UsageService,
} from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { NatsConnectionHolder, StrataException } from '@strata/platform';
import { AuthConfig } from '../auth.config.js';
import { ServiceAccountsRepository } from '../service-accounts/service-accounts.repository.js';
import { PlansService } from './plans.service.js';

const ASK_TIMEOUT_MS = 5000;

/** `GET /workspace/api/v1/workspaces/{slug}/usage` (docs/plans.md). */
export interface WorkspaceUsage {
  readonly workspace: string;
  readonly plan: string;
  /** Each resource's limit (null: unlimited) and usage (null: its service did not answer). */
  readonly resources: Readonly<Record<PlanLimit, { readonly limit: number | null; readonly usage: number | null }>>;
  readonly features: PlanFeatures;
  /** When the counts were gathered. */
  readonly generatedAt: string;
}

/**
 * A workspace's plan and usage: the auth service counts its service accounts;
 * every other service is asked for its own counts (core NATS request/reply),
 * so that each keeps its schema to itself. A service that does not answer
 * leaves its resources' usage null rather than failing the page.
 */
@Injectable()
export class WorkspaceUsageService {
  private readonly logger = new Logger('WorkspaceUsage');

  constructor(
    private readonly plans: PlansService,
    private readonly serviceAccounts: ServiceAccountsRepository,
    private readonly nats: NatsConnectionHolder,
    private readonly config: AuthConfig,
  ) {}

  async usageOf(scope: WorkspaceScope): Promise<WorkspaceUsage> {
    const plan = await this.plans.planOf(scope);
    if (!plan) throw StrataException.notFound(`Workspace '${scope.workspace}' not found`, ErrorCode.NOT_FOUND);
    const services = Object.keys(USAGE_SERVICES).filter((s): s is Exclude<UsageService, 'auth'> => s !== 'auth');
    const [own, ...answers] = await Promise.all([
      this.serviceAccounts.count(scope),
      ...services.map((service) => this.ask(scope, service)),
    ]);
    const counted: Partial<Record<PlanLimit, number>> = { serviceAccounts: own };
    for (const answer of answers) Object.assign(counted, answer);
    const resources = {} as Record<PlanLimit, { limit: number | null; usage: number | null }>;
    for (const key of PLAN_LIMITS) resources[key] = { limit: plan.limits[key], usage: counted[key] ?? null };
    return {
      workspace: scope.workspace,
      plan: plan.plan,
      resources,
      features: plan.features,
      generatedAt: new Date().toISOString(),
    };
  }

  private async ask(
    scope: WorkspaceScope,
    service: Exclude<UsageService, 'auth'>,
  ): Promise<Partial<Record<PlanLimit, number>>> {
    try {
      const nc = await this.nats.get();
      const msg = await nc.request(
        usageSubject(this.config.NATS_PREFIX, service),
        JSON.stringify({ workspaceSlug: scope.workspace }),
        { timeout: ASK_TIMEOUT_MS },
      );
      const reply = msg.json<Partial<UsageReply> & { error?: unknown }>();
      if (typeof reply.usage !== 'object' || reply.usage === null)
        throw new Error(typeof reply.error === 'string' ? reply.error : 'no usage');
      const usage: Partial<Record<PlanLimit, number>> = {};
      for (const key of USAGE_SERVICES[service] as readonly PlanLimit[]) {
        const n = reply.usage[key];
        if (typeof n === 'number') usage[key] = n;
      }
      return usage;
    } catch (err) {
      this.logger.warn({
        msg: 'a service did not report its usage',
        service,
        workspace: scope.workspace,
        err: String(err),
      });
      return {};
    }
  }
}
