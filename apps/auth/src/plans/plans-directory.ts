import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { isWorkspaceSlug, workspacePlanSubject, type WorkspacePlanReply } from '@strata/contracts';
import { issueWorkspaceScope } from '@strata/db';
import { serveRequests } from '@strata/events';
import { NatsConnectionHolder } from '@strata/platform';
import { AuthConfig } from '../auth.config.js';
import { PlansService } from './plans.service.js';

/**
 * Answers which plan a workspace has (core NATS request/reply, a queue group
 * of the auth replicas): every service asks it before a create that a plan
 * limits (docs/plans.md). NATS is the services' own network; the plan is no
 * secret of the workspace.
 */
@Injectable()
export class PlansDirectory implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('PlansDirectory');
  private subscription: Subscription | undefined;

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly plans: PlansService,
    private readonly config: AuthConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const nc = await this.nats.get();
    this.subscription = serveRequests(
      nc,
      workspacePlanSubject(this.config.NATS_PREFIX),
      `${this.config.NATS_PREFIX}_auth_plans`,
      (payload) => this.answer(payload as { workspaceSlug?: unknown }),
      (err) => this.logger.warn({ msg: 'plan question not answered', err: String(err) }),
    );
    await nc.flush();
  }

  private async answer(q: { workspaceSlug?: unknown }): Promise<WorkspacePlanReply> {
    if (typeof q.workspaceSlug !== 'string' || !isWorkspaceSlug(q.workspaceSlug)) {
      throw new Error('no workspace');
    }
    // The workspace one of our services names; only its plan is read.
    const plan = await this.plans.planOf(issueWorkspaceScope(q.workspaceSlug));
    return plan ? { found: true, plan } : { found: false };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscription?.drain().catch(() => undefined);
  }
}
