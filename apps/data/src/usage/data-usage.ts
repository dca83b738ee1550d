import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { ID_FORMATS, usageSubject, type UsageReply } from '@strata/contracts';
import { issueWorkspaceScope } from '@strata/db';
import { serveRequests } from '@strata/events';
import { NatsConnectionHolder, PeriodicTask } from '@strata/platform';
import { DataConfig } from '../data.config.js';
import { UsageRepository, type RecordUsage } from './usage.repository.js';

/**
 * The data service's part of a workspace's usage (docs/plans.md): answers the
 * auth service's question (core NATS request/reply, a queue group of the data
 * replicas) with the records and storage counters, and reconciles the counters
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
    const nc = await this.nats.get();
    this.subscription = serveRequests(
      nc,
      usageSubject(this.config.NATS_PREFIX, 'data'),
      `${this.config.NATS_PREFIX}_data_usage`,
      (payload) => this.answer(payload as { workspaceSlug?: unknown }),
      (err) => this.logger.warn({ msg: 'usage question not answered', err: String(err) }),
    );
    await nc.flush();
    if (this.config.DATA_USAGE_RECONCILE_ENABLED) this.task.start();
  }

  private async answer(q: { workspaceSlug?: unknown }): Promise<UsageReply> {
    if (typeof q.workspaceSlug !== 'string' || !ID_FORMATS.workspaceSlug.test(q.workspaceSlug)) {
      throw new Error('no workspace');
    }
    // The workspace our own auth service names; only its counters are read.
    return { usage: await this.usage.usage(issueWorkspaceScope(q.workspaceSlug)) };
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
