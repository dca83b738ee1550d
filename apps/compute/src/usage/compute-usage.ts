import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import type { UsageReply } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { answerUsageQuestions, NatsConnectionHolder } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { ComputeUsageRepository } from './usage.repository.js';
import { MonthlyExecutions } from './monthly-executions.js';

/**
 * The compute service's part of a workspace's usage (docs/plans.md): answers
 * the auth service's question with the workspace's functions, triggers and
 * executions this month.
 */
@Injectable()
export class ComputeUsage implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ComputeUsage');
  private subscription: Subscription | undefined;

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly usage: ComputeUsageRepository,
    private readonly monthly: MonthlyExecutions,
    private readonly config: ComputeConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.subscription = await answerUsageQuestions(
      this.nats,
      this.config.NATS_PREFIX,
      'compute',
      (scope) => this.count(scope),
      (err) => this.logger.warn({ msg: 'usage question not answered', err: String(err) }),
    );
  }

  private async count(scope: WorkspaceScope): Promise<UsageReply['usage']> {
    const [functions, triggers, functionExecutionsPerMonth] = await Promise.all([
      this.usage.count(scope, 'functions'),
      this.usage.count(scope, 'triggers'),
      this.monthly.thisMonth(scope),
    ]);
    return { functions, triggers, functionExecutionsPerMonth };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscription?.drain().catch(() => undefined);
  }
}
