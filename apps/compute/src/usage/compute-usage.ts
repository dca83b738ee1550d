import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { ID_FORMATS, usageSubject, type UsageReply } from '@strata/contracts';
import { issueWorkspaceScope } from '@strata/db';
import { serveRequests } from '@strata/events';
import { NatsConnectionHolder } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { ComputeUsageRepository } from './usage.repository.js';
import { MonthlyExecutions } from './monthly-executions.js';

/**
 * The compute service's part of a workspace's usage (docs/plans.md): answers
 * the auth service's question (core NATS request/reply, a queue group of the
 * compute API replicas) with the workspace's functions and triggers.
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
    const nc = await this.nats.get();
    this.subscription = serveRequests(
      nc,
      usageSubject(this.config.NATS_PREFIX, 'compute'),
      `${this.config.NATS_PREFIX}_compute_usage`,
      (payload) => this.answer(payload as { workspaceSlug?: unknown }),
      (err) => this.logger.warn({ msg: 'usage question not answered', err: String(err) }),
    );
    await nc.flush();
  }

  private async answer(q: { workspaceSlug?: unknown }): Promise<UsageReply> {
    if (typeof q.workspaceSlug !== 'string' || !ID_FORMATS.workspaceSlug.test(q.workspaceSlug)) {
      throw new Error('no workspace');
    }
    // The workspace our own auth service names; only its counts are read.
    const scope = issueWorkspaceScope(q.workspaceSlug);
    const [functions, triggers, functionExecutionsPerMonth] = await Promise.all([
      this.usage.count(scope, 'functions'),
      this.usage.count(scope, 'triggers'),
      this.monthly.thisMonth(scope),
    ]);
    return { usage: { functions, triggers, functionExecutionsPerMonth } };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscription?.drain().catch(() => undefined);
  }
}
