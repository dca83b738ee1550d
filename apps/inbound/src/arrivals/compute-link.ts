import { Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { RequestError, TimeoutError, type Subscription } from '@nats-io/transport-node';
import {
  ErrorCode,
  httpTriggerDescribeSubject,
  httpTriggerDispatchBatchSubject,
  httpTriggerResolveSubject,
  type HttpTriggerDescribeReply,
  type HttpTriggerDispatch,
  type HttpTriggerDispatchBatchReply,
  type HttpTriggerDispatchReply,
  type HttpTriggerResolution,
} from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { injectTraceContext, subscribeTriggersChanged } from '@strata/events';
import { NatsConnectionHolder, StrataException } from '@strata/platform';
import { InboundConfig } from '../inbound.config.js';

/** Trigger lookups kept at once (oldest out first). */
const MAX_CACHED_TRIGGERS = 10_000;

/**
 * The inbound service's questions to compute, which owns triggers and runs
 * (core NATS request/reply to the compute API replicas): which http-trigger a
 * path names, and to queue the run of a stored arrival. Compute not answering
 * is a 503 (`UNAVAILABLE`), never a guess. A lookup is kept for
 * INBOUND_TRIGGER_CACHE_MS, and dropped at once when compute says the
 * workspace's triggers or functions changed (`<prefix>.compute.triggers.changed`).
 */
@Injectable()
export class ComputeLink implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly resolved = new Map<string, { answer: Promise<HttpTriggerResolution>; until: number }>();
  private changes: Subscription | undefined;

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly config: InboundConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const nc = await this.nats.get();
    this.changes = subscribeTriggersChanged(nc, this.config.NATS_PREFIX, (workspace) => this.forget(workspace));
    await nc.flush();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.changes?.drain().catch(() => undefined);
  }

  /** Drops the lookups kept of a workspace's paths (a slug has no `/`: the prefix is the workspace's alone). */
  private forget(workspace: string): void {
    const prefix = `${workspace}/`;
    for (const key of this.resolved.keys()) if (key.startsWith(prefix)) this.resolved.delete(key);
  }

  /** The trigger at `path`, reused for INBOUND_TRIGGER_CACHE_MS (a failed lookup is not kept). */
  resolve(scope: WorkspaceScope, path: string): Promise<HttpTriggerResolution> {
    const key = `${scope.workspace}/${path}`;
    const now = performance.now();
    const cached = this.resolved.get(key);
    if (cached && cached.until > now) return cached.answer;
    const answer = this.ask<HttpTriggerResolution>(httpTriggerResolveSubject(this.config.NATS_PREFIX), {
      workspaceSlug: scope.workspace,
      path,
    });
    if (this.config.INBOUND_TRIGGER_CACHE_MS > 0) {
      if (this.resolved.size >= MAX_CACHED_TRIGGERS) this.resolved.delete(this.resolved.keys().next().value!);
      this.resolved.set(key, { answer, until: now + this.config.INBOUND_TRIGGER_CACHE_MS });
      answer.catch(() => this.resolved.delete(key));
    }
    return answer;
  }

  /** What a replay of the trigger's arrivals would run now. */
  describe(scope: WorkspaceScope, triggerId: string): Promise<HttpTriggerDescribeReply> {
    return this.ask(httpTriggerDescribeSubject(this.config.NATS_PREFIX), { workspaceSlug: scope.workspace, triggerId });
  }

  /** The runs of a batch of the workspace's arrivals, answered in the order given. */
  async dispatch(
    scope: WorkspaceScope,
    dispatches: readonly Omit<HttpTriggerDispatch, 'workspaceSlug'>[],
  ): Promise<readonly HttpTriggerDispatchReply[]> {
    const { replies } = await this.ask<HttpTriggerDispatchBatchReply>(
      httpTriggerDispatchBatchSubject(this.config.NATS_PREFIX),
      { workspaceSlug: scope.workspace, dispatches },
    );
    const answered: unknown = replies;
    if (!Array.isArray(answered) || answered.length !== dispatches.length) throw unavailable();
    return replies;
  }

  private async ask<T>(subject: string, payload: unknown): Promise<T> {
    const nc = await this.nats.get();
    let answer: T | { error: string };
    try {
      const msg = await nc.request(subject, JSON.stringify(payload), {
        timeout: this.config.INBOUND_COMPUTE_TIMEOUT_MS,
        headers: injectTraceContext(),
      });
      answer = msg.json<T | { error: string }>();
    } catch (err) {
      if ((err instanceof RequestError && err.isNoResponders()) || err instanceof TimeoutError) {
        throw unavailable();
      }
      throw err;
    }
    if (typeof answer === 'object' && answer !== null && 'error' in answer) throw unavailable();
    return answer;
  }
}

function unavailable(): StrataException {
  return new StrataException(
    ErrorCode.UNAVAILABLE,
    'The compute service did not answer; try again shortly.',
    undefined,
    { 'Retry-After': '1' },
  );
}
