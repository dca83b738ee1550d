import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { ID_FORMATS, usageSubject, type UsageReply } from '@strata/contracts';
import { issueWorkspaceScope, type Tx, type WorkspaceScope } from '@strata/db';
import { serveRequests } from '@strata/events';
import { NatsConnectionHolder, quotaRefusal, WorkspacePlans } from '@strata/platform';
import { OrchestrationConfig } from '../orchestration.config.js';
import { OrchestrationUsageRepository } from './usage.repository.js';

/**
 * The orchestration service's part of a workspace's plan (docs/plans.md): whether one
 * more of its orchestrations fits, and its answer to the auth service's usage question
 * (core NATS request/reply, a queue group of the orchestration replicas).
 */
@Injectable()
export class OrchestrationUsage implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('OrchestrationUsage');
  private subscription: Subscription | undefined;

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly plans: WorkspacePlans,
    private readonly usage: OrchestrationUsageRepository,
    private readonly config: OrchestrationConfig,
  ) {}

  /** Refuses (403 QUOTA_EXCEEDED) one more past the plan's limit; counts under a lock held until `tx` ends. */
  async ensureRoom(scope: WorkspaceScope, tx: Tx): Promise<void> {
    const plan = await this.plans.planOf(scope);
    if (!plan || plan.limits.orchestrations === null) return;
    const refusal = quotaRefusal(plan, 'orchestrations', await this.usage.countLocked(scope, tx));
    if (refusal) throw refusal;
  }

  async onApplicationBootstrap(): Promise<void> {
    const nc = await this.nats.get();
    this.subscription = serveRequests(
      nc,
      usageSubject(this.config.NATS_PREFIX, 'orchestration'),
      `${this.config.NATS_PREFIX}_orchestration_usage`,
      (payload) => this.answer(payload as { workspaceSlug?: unknown }),
      (err) => this.logger.warn({ msg: 'usage question not answered', err: String(err) }),
    );
    await nc.flush();
  }

  private async answer(q: { workspaceSlug?: unknown }): Promise<UsageReply> {
    if (typeof q.workspaceSlug !== 'string' || !ID_FORMATS.workspaceSlug.test(q.workspaceSlug)) {
      throw new Error('no workspace');
    }
    // The workspace our own auth service names; only its count is read.
    return { usage: { orchestrations: await this.usage.count(issueWorkspaceScope(q.workspaceSlug)) } };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscription?.drain().catch(() => undefined);
  }
}
