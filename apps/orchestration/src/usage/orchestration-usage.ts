import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import type { Tx, WorkspaceScope } from '@strata/db';
import { answerUsageQuestions, NatsConnectionHolder, WorkspacePlans } from '@strata/platform';
import { OrchestrationConfig } from '../orchestration.config.js';
import { OrchestrationUsageRepository } from './usage.repository.js';

/**
 * The orchestration service's part of a workspace's plan (docs/plans.md): whether one
 * more of its orchestrations fits, and its answer to the auth service's usage question.
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
  ensureRoom(scope: WorkspaceScope, tx: Tx): Promise<void> {
    return this.plans.ensureRoom(scope, 'orchestrations', () => this.usage.countLocked(scope, tx));
  }

  async onApplicationBootstrap(): Promise<void> {
    this.subscription = await answerUsageQuestions(
      this.nats,
      this.config.NATS_PREFIX,
      'orchestration',
      async (scope) => ({ orchestrations: await this.usage.count(scope) }),
      (err) => this.logger.warn({ msg: 'usage question not answered', err: String(err) }),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscription?.drain().catch(() => undefined);
  }
}
