import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { randomUUID } from 'node:crypto';
import {
  ID_FORMATS,
  httpTriggerDescribeSubject,
  httpTriggerDispatchBatchSubject,
  httpTriggerDispatchSubject,
  httpTriggerQueue,
  httpTriggerResolveSubject,
  type HttpTriggerDescribeReply,
  type HttpTriggerDispatch,
  type HttpTriggerDispatchBatch,
  type HttpTriggerDispatchBatchReply,
  type HttpTriggerDispatchReply,
  type HttpTriggerLookup,
  type HttpTriggerResolution,
} from '@strata/contracts';
import { issueWorkspaceScope, type WorkspaceScope } from '@strata/db';
import { serveRequests } from '@strata/events';
import { NatsConnectionHolder } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import type { JsonObject } from '../json.js';
import { FunctionsRepository } from '../functions/functions.repository.js';
import { RunsRepository } from '../runs/runs.repository.js';
import type { TriggerEntity } from '../triggers/trigger.entity.js';
import { AutoPersistLinks } from './auto-persist-links.js';
import { TriggerExecutions } from '../triggers/trigger-executions.service.js';
import { TriggersRepository, type FunctionVersionRef } from '../triggers/triggers.repository.js';

/**
 * Compute's side of inbound capture (core NATS request/reply, a queue group of
 * the API replicas): which http-trigger a path names, with its signing secret
 * still sealed, and the run of a stored arrival, queued at most once per
 * arrival (its job id, fixed when inbound stored it, is unique among runs).
 */
@Injectable()
export class HttpTriggerDirectory implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('HttpTriggerDirectory');
  private readonly subscriptions: Subscription[] = [];

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly triggers: TriggersRepository,
    private readonly executions: TriggerExecutions,
    private readonly runs: RunsRepository,
    private readonly autoPersist: AutoPersistLinks,
    private readonly functions: FunctionsRepository,
    private readonly config: ComputeConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const nc = await this.nats.get();
    const queue = httpTriggerQueue(this.config.NATS_PREFIX);
    const serve = (subject: string, answer: (payload: unknown) => Promise<unknown>) =>
      serveRequests(nc, subject, queue, answer, (err, msg) =>
        this.logger.error({ msg: 'http-trigger request failed', subject: msg.subject, err: String(err) }),
      );
    this.subscriptions.push(
      serve(httpTriggerResolveSubject(this.config.NATS_PREFIX), (p) => this.resolve(p as HttpTriggerLookup)),
      serve(httpTriggerDispatchSubject(this.config.NATS_PREFIX), (p) => this.dispatch(p as HttpTriggerDispatch)),
      serve(httpTriggerDispatchBatchSubject(this.config.NATS_PREFIX), (p) =>
        this.dispatchBatch(p as HttpTriggerDispatchBatch),
      ),
      serve(httpTriggerDescribeSubject(this.config.NATS_PREFIX), (p) =>
        this.describe(p as { workspaceSlug: string; triggerId: string }),
      ),
    );
    await nc.flush();
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.subscriptions.map((s) => s.drain().catch(() => undefined)));
  }

  private async resolve(lookup: HttpTriggerLookup): Promise<HttpTriggerResolution> {
    if (typeof lookup?.workspaceSlug !== 'string' || typeof lookup.path !== 'string') return { found: false };
    // The workspace our own inbound service names for an arrival on its URL; only its trigger is read.
    const scope = issueWorkspaceScope(lookup.workspaceSlug);
    const trigger = await this.triggers.httpTriggerAt(scope, lookup.path);
    if (!trigger) return { found: false };
    const m = trigger.metadata;
    const secret = m['signingSecret'];
    const sealed =
      typeof secret === 'object' && secret !== null && !Array.isArray(secret) && typeof secret['value'] === 'string'
        ? secret['value']
        : null;
    return {
      found: true,
      trigger: {
        id: trigger.id,
        name: trigger.name,
        functionId: trigger.functionId,
        paused: trigger.paused,
        validateSignature: m['validateSignature'] === true,
        signatureHeaderName: typeof m['signatureHeaderName'] === 'string' ? m['signatureHeaderName'] : 'x-signature',
        signingSecret: sealed,
        captureRejected: m['captureRejected'] === true,
        autoPersist: collectionOf(m) !== undefined,
      },
    };
  }

  private async describe(q: { workspaceSlug: string; triggerId: string }): Promise<HttpTriggerDescribeReply> {
    if (typeof q?.workspaceSlug !== 'string' || !ID_FORMATS.uuid.test(String(q.triggerId))) return { found: false };
    const scope = issueWorkspaceScope(q.workspaceSlug);
    const trigger = await this.triggers.find(scope, q.triggerId);
    if (!trigger || trigger.executionType !== 'http-trigger') return { found: false };
    const fn = trigger.functionId ? await this.functions.find(scope, trigger.functionId) : undefined;
    const collectionId = collectionOf(trigger.metadata);
    const ap = trigger.metadata['autoPersist'];
    const recordSlug = typeof ap === 'object' && ap !== null && !Array.isArray(ap) ? ap['recordSlug'] : undefined;
    return {
      found: true,
      trigger: {
        id: trigger.id,
        name: trigger.name,
        paused: trigger.paused,
        functionId: fn?.id ?? null,
        functionVersion: fn?.version ?? null,
        autoPersist: collectionId !== undefined && typeof recordSlug === 'string' ? { recordSlug, collectionId } : null,
      },
    };
  }

  /** The single form (a service of the previous version during a rolling upgrade): a batch of one. */
  private async dispatch(d: HttpTriggerDispatch): Promise<HttpTriggerDispatchReply> {
    const { replies } = await this.dispatchBatch({ workspaceSlug: d.workspaceSlug, dispatches: [d] });
    return replies[0]!;
  }

  /** The runs of a batch of one workspace's arrivals, answered in the order asked. */
  private async dispatchBatch(b: HttpTriggerDispatchBatch): Promise<HttpTriggerDispatchBatchReply> {
    if (typeof b?.workspaceSlug !== 'string' || !Array.isArray(b.dispatches)) return { replies: [] };
    const dispatches: HttpTriggerDispatchBatch['dispatches'] = b.dispatches;
    // The workspace our own inbound service names for arrivals it stored under it.
    const scope = issueWorkspaceScope(b.workspaceSlug);
    const replies: HttpTriggerDispatchReply[] = [];
    const byTrigger = new Map<string, number[]>();
    dispatches.forEach((d, i) => byTrigger.set(d.triggerId, [...(byTrigger.get(d.triggerId) ?? []), i]));
    for (const [triggerId, indexes] of byTrigger) {
      const answers = await this.dispatchToTrigger(
        scope,
        triggerId,
        indexes.map((i) => dispatches[i]!),
      );
      indexes.forEach((i, k) => (replies[i] = answers[k]!));
    }
    return { replies };
  }

  private async dispatchToTrigger(
    scope: WorkspaceScope,
    triggerId: string,
    ds: readonly Omit<HttpTriggerDispatch, 'workspaceSlug'>[],
  ): Promise<HttpTriggerDispatchReply[]> {
    const found = ID_FORMATS.uuid.test(String(triggerId))
      ? await this.triggers.findWithFunction(scope, triggerId)
      : undefined;
    const trigger = found?.trigger;
    if (!found || !trigger || trigger.executionType !== 'http-trigger') {
      return ds.map(() => ({ status: 'dropped', reason: 'The trigger no longer exists.', notFound: true }));
    }
    if (trigger.paused) return ds.map(() => ({ status: 'dropped', reason: 'The trigger is paused.', notFound: false }));
    // Auto-persist comes first and never blocks the run: its outcome rides along with the dispatch's.
    const collectionId = collectionOf(trigger.metadata);
    const persists = await Promise.all(
      ds.map(async (d) =>
        d.persist === true && collectionId !== undefined
          ? this.autoPersist.persist(scope, collectionId, d.executionParams['body'])
          : undefined,
      ),
    );
    const replies = await this.queue(scope, trigger, found.fn, ds);
    return replies.map((reply, k) => (persists[k] ? { ...reply, persist: persists[k] } : reply));
  }

  private async queue(
    scope: WorkspaceScope,
    trigger: TriggerEntity,
    fn: FunctionVersionRef | undefined,
    ds: readonly Omit<HttpTriggerDispatch, 'workspaceSlug'>[],
  ): Promise<HttpTriggerDispatchReply[]> {
    // The arrival's job id (fixed when it was stored) is what makes its run happen once.
    const jobIds = ds.map((d) => (ID_FORMATS.uuid.test(String(d.jobId)) ? d.jobId : randomUUID()));
    let queued;
    try {
      queued = await this.executions.runForArrivals(
        scope,
        trigger,
        fn,
        ds.map((d, k) => ({ jobId: jobIds[k]!, executionParams: d.executionParams as JsonObject })),
      );
    } catch (err) {
      // runRequest's 404: the trigger's function is gone.
      if ((err as { status?: number }).status === 404) {
        const reason = `Function not found for trigger: ${trigger.id}`;
        return ds.map(() => ({ status: 'dropped', reason, notFound: true }));
      }
      throw err;
    }
    // Asked again (a retry, the sweep): those arrivals' runs exist already, found by their job ids.
    const existing = await this.runs.runsOfJobs(
      scope,
      jobIds.filter((_, k) => !queued[k]),
    );
    return queued.map((q, k): HttpTriggerDispatchReply => {
      if (!q) {
        const runId = existing.get(jobIds[k]!);
        return runId
          ? { status: 'dispatched', runId, jobId: jobIds[k]! }
          : { status: 'dropped', reason: 'The arrival was dispatched before.', notFound: false };
      }
      if (q.status === 'rate_limited') {
        return {
          status: 'dropped',
          reason: 'The workspace reached its function executions limit; the run is recorded as rate_limited.',
          notFound: false,
          runId: q.runId,
        };
      }
      return { status: q.published ? 'dispatched' : 'queued', runId: q.runId, jobId: q.jobId };
    });
  }
}

/** The collection an http-trigger's enabled autoPersist is linked to. */
function collectionOf(metadata: JsonObject): string | undefined {
  const ap = metadata['autoPersist'];
  if (typeof ap !== 'object' || ap === null || Array.isArray(ap) || ap['enabled'] !== true) return undefined;
  return typeof ap['collectionId'] === 'string' ? ap['collectionId'] : undefined;
}
