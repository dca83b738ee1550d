import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { issueWorkspaceScope } from '@strata/db';
import { answerUsageQuestions, NatsConnectionHolder, PeriodicTask } from '@strata/platform';
import { DataConfig } from '../data.config.js';
import { UsageRepository, type RecordUsage } from './usage.repository.js';

/**
 * The data service's part of a workspace's usage (docs/plans.md): answers the
 * auth service's question with the records and storage counters, and reconciles the counters
 * with the records every DATA_USAGE_RECONCILE_INTERVAL_MS.
 */
@Injectable()
export class DataUsage implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('DataUsage');
  private readonly task: PeriodicTask;
  private subscription: Subscription | undefined;

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly usage: UsageRepository,
    private readonly config: DataConfig,
  ) {
    this.task = new PeriodicTask('usage reconciliation', config.DATA_USAGE_RECONCILE_INTERVAL_MS, () =>
      this.reconcile(),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    this.subscription = await answerUsageQuestions(
      this.nats,
      this.config.NATS_PREFIX,
      'data',
      (scope) => this.usage.usage(scope),
      (err) => this.logger.warn({ msg: 'usage question not answered', err: String(err) }),
    );
    if (this.config.DATA_USAGE_RECONCILE_ENABLED) this.task.start();
  }

  /** One pass over every workspace; returns the drift repaired, by workspace (those that had any). */
  async reconcile(): Promise<Record<string, RecordUsage>> {
    const repaired: Record<string, RecordUsage> = {};
    for (const workspace of await this.usage.workspaces()) {
      // A workspace our own tables name.
      const drift = await this.usage.reconcile(issueWorkspaceScope(workspace));
      if (drift.records !== 0 || drift.storageBytes !== 0) repaired[workspace] = drift;
    }
    if (Object.keys(repaired).length > 0) {
      this.logger.warn({ msg: 'usage counters drifted from the records and were repaired', repaired });
    }
    return repaired;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task.stop();
    await this.subscription?.drain().catch(() => undefined);
  }
}
