import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { functionsExistSubject, ID_FORMATS, type FunctionsExistReply } from '@strata/contracts';
import { issueWorkspaceScope } from '@strata/db';
import { serveRequests } from '@strata/events';
import { NatsConnectionHolder } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { functionKindOf } from './function-code.js';
import { FunctionsRepository } from './functions.repository.js';

/** At most this many ids per question. */
const MAX_IDS = 200;

/**
 * Answers which function ids name live functions of a workspace, and which of
 * those are endpoint code (core NATS request/reply, a queue group of the API
 * replicas): the orchestration service checks its compute steps' `functionId`s
 * with it.
 */
@Injectable()
export class FunctionDirectory implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('FunctionDirectory');
  private subscription: Subscription | undefined;

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly functions: FunctionsRepository,
    private readonly config: ComputeConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const nc = await this.nats.get();
    this.subscription = serveRequests(
      nc,
      functionsExistSubject(this.config.NATS_PREFIX),
      `${this.config.NATS_PREFIX}_compute_functions`,
      (payload) => this.existing(payload as { workspaceSlug?: unknown; ids?: unknown }),
      (err) => this.logger.warn({ msg: 'functions question not answered', err: String(err) }),
    );
    await nc.flush();
  }

  private async existing(q: { workspaceSlug?: unknown; ids?: unknown }): Promise<FunctionsExistReply> {
    const ids = Array.isArray(q.ids)
      ? q.ids.filter((id): id is string => typeof id === 'string' && ID_FORMATS.uuid.test(id)).slice(0, MAX_IDS)
      : [];
    if (typeof q.workspaceSlug !== 'string') throw new Error('no workspace');
    // The workspace our own orchestration service names; only its functions' ids are read.
    const scope = issueWorkspaceScope(q.workspaceSlug);
    const live = await this.functions.liveCode(scope, ids);
    return {
      existing: live.map((f) => f.id),
      endpoints: live.filter((f) => functionKindOf(f.code) === 'endpoint').map((f) => f.id),
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscription?.drain().catch(() => undefined);
  }
}
