import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import type { Tx, WorkspaceScope } from '@strata/db';
import { answerUsageQuestions, NatsConnectionHolder, WorkspacePlans } from '@strata/platform';
import { WebhooksConfig } from '../webhooks.config.js';
import { WebhooksUsageRepository } from './usage.repository.js';

/**
 * The webhooks service's part of a workspace's plan (docs/plans.md): whether one
 * more of its webhook subscriptions fits, and its answer to the auth service's usage question.
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
  ensureRoom(scope: WorkspaceScope, tx: Tx): Promise<void> {
    return this.plans.ensureRoom(scope, 'webhookSubscriptions', () => this.usage.countLocked(scope, tx));
  }

  async onApplicationBootstrap(): Promise<void> {
    this.subscription = await answerUsageQuestions(
      this.nats,
      this.config.NATS_PREFIX,
      'webhooks',
      async (scope) => ({ webhookSubscriptions: await this.usage.count(scope) }),
      (err) => this.logger.warn({ msg: 'usage question not answered', err: String(err) }),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscription?.drain().catch(() => undefined);
  }
}
