import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { ID_FORMATS, usageSubject, type UsageReply } from '@strata/contracts';
import { issueWorkspaceScope, type Tx, type WorkspaceScope } from '@strata/db';
import { serveRequests } from '@strata/events';
import { NatsConnectionHolder, quotaRefusal, WorkspacePlans } from '@strata/platform';
import { WebhooksConfig } from '../webhooks.config.js';
import { WebhooksUsageRepository } from './usage.repository.js';

/**
 * The webhooks service's part of a workspace's plan (docs/plans.md): whether one
 * more of its webhook subscriptions fits, and its answer to the auth service's usage question
 * (core NATS request/reply, a queue group of the webhooks replicas).
 */
@Injectable()
export class WebhooksUsage implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('WebhooksUsage');
  private subscription: Subscription | undefined;

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly plans: WorkspacePlans,
    private readonly usage: WebhooksUsageRepository,
    private readonly config: WebhooksConfig,
  ) {}

  /** Refuses (403 QUOTA_EXCEEDED) one more past the plan's limit; counts under a lock held until `tx` ends. */
  async ensureRoom(scope: WorkspaceScope, tx: Tx): Promise<void> {
    const plan = await this.plans.planOf(scope);
    if (!plan || plan.limits.webhookSubscriptions === null) return;
    const refusal = quotaRefusal(plan, 'webhookSubscriptions', await this.usage.countLocked(scope, tx));
    if (refusal) throw refusal;
  }

  async onApplicationBootstrap(): Promise<void> {
    const nc = await this.nats.get();
    this.subscription = serveRequests(
      nc,
      usageSubject(this.config.NATS_PREFIX, 'webhooks'),
      `${this.config.NATS_PREFIX}_webhooks_usage`,
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
    return { usage: { webhookSubscriptions: await this.usage.count(issueWorkspaceScope(q.workspaceSlug)) } };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscription?.drain().catch(() => undefined);
  }
}
