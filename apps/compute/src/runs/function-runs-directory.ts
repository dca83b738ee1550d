import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { isUUID } from 'class-validator';
import type { Subscription } from '@nats-io/transport-node';
import {
  functionRunStartSubject,
  functionRunStatusSubject,
  ID_FORMATS,
  type FunctionRunStart,
  type FunctionRunStartReply,
  type FunctionRunStatusQuery,
  type FunctionRunStatusReply,
} from '@strata/contracts';
import { issueWorkspaceScope } from '@strata/db';
import { serveRequests } from '@strata/events';
import { Clock, NatsConnectionHolder } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { FunctionsRepository } from '../functions/functions.repository.js';
import type { JsonObject } from '../json.js';
import { SYSTEM_TRIGGER_NAME, TriggersRepository } from '../triggers/triggers.repository.js';
import { ExecutionBudget } from './execution-budget.js';
import { RunQueue, type QueuedJob, type RunRequest } from './run-queue.js';
import { RunsRepository } from './runs.repository.js';

/** The longest a step's function run may take (orchestration steps default to 300000). */
const MAX_STEP_WALL_MS = 3_600_000;

/**
 * Compute's side of orchestration compute steps (core NATS request/reply, a
 * queue group of the API replicas): starts a run of a function's current
 * version through the job pipeline (as the workspace's system default trigger,
 * counted in the executions limit), and answers how a run ended.
 */
@Injectable()
export class FunctionRunsDirectory implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('FunctionRunsDirectory');
  private readonly subscriptions: Subscription[] = [];

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly functions: FunctionsRepository,
    private readonly triggers: TriggersRepository,
    private readonly runs: RunsRepository,
    private readonly queue: RunQueue,
    private readonly budget: ExecutionBudget,
    private readonly clock: Clock,
    private readonly config: ComputeConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const nc = await this.nats.get();
    const queue = `${this.config.NATS_PREFIX}_compute_function_runs`;
    const serve = (subject: string, answer: (payload: unknown) => Promise<unknown>) =>
      serveRequests(nc, subject, queue, answer, (err, msg) =>
        this.logger.error({ msg: 'function run request failed', subject: msg.subject, err: String(err) }),
      );
    this.subscriptions.push(
      serve(functionRunStartSubject(this.config.NATS_PREFIX), (p) => this.start(p as FunctionRunStart)),
      serve(functionRunStatusSubject(this.config.NATS_PREFIX), (p) => this.status(p as FunctionRunStatusQuery)),
    );
    await nc.flush();
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.subscriptions.map((s) => s.drain().catch(() => undefined)));
  }

  private async start(s: FunctionRunStart): Promise<FunctionRunStartReply> {
    if (typeof s?.workspaceSlug !== 'string' || !ID_FORMATS.uuid.test(String(s.functionId))) {
      return { started: false, reason: 'Function not found.' };
    }
    // The workspace our own orchestration service names for one of its runs.
    const scope = issueWorkspaceScope(s.workspaceSlug);
    const fn = await this.functions.find(scope, s.functionId);
    if (!fn) return { started: false, reason: 'Function not found.' };
    const triggerId = await this.triggers.systemTrigger(scope, randomUUID(), this.clock.now());
    const sunset: unknown = s.legacyStepOutputs?.sunset;
    const wallMs = Math.min(MAX_STEP_WALL_MS, Math.max(1000, Math.round(Number(s.timeoutMs) || 300_000)));
    const request: RunRequest = {
      target: { kind: 'function', functionId: fn.id, version: fn.version, codeHash: fn.codeHash },
      triggerId,
      source: 'trigger',
      params: {
        triggerParams: {},
        executionParams: s.executionParams ?? {},
        ...(isSunset(sunset) ? { legacyStepOutputs: { sunset } } : {}),
      },
      context: {
        trigger: { id: triggerId, name: SYSTEM_TRIGGER_NAME, executionType: 'on-demand' },
        invocationDepth: 0,
        orchestration: (s.origin ?? {}) as JsonObject,
      },
      by: 'system:orchestration',
      limits: { wallMs },
    };
    if (s.jobId === undefined) {
      const queued = await this.queue.enqueue(scope, { ...request, rateLimited: !(await this.budget.take(scope)) });
      return started(queued);
    }
    if (!isUUID(s.jobId, 'all')) return { started: false, reason: 'The job id is not a UUID.' };
    // Started once per job id: a repeated start answers the run the first one started.
    const [queued] = await this.queue.enqueueJobsOnce(
      scope,
      [{ ...request, jobId: s.jobId }],
      async () => !(await this.budget.take(scope)),
    );
    if (queued) return started(queued);
    const first = await this.runs.findByJobId(scope, s.jobId);
    if (!first) return { started: false, reason: 'The job id belongs to another workspace.' };
    return { started: true, runId: first.id, jobId: first.jobId, rateLimited: first.status === 'rate_limited' };
  }

  private async status(q: FunctionRunStatusQuery): Promise<FunctionRunStatusReply> {
    if (typeof q?.workspaceSlug !== 'string' || !ID_FORMATS.uuid.test(String(q.runId))) return { found: false };
    const scope = issueWorkspaceScope(q.workspaceSlug);
    const run = await this.runs.find(scope, q.runId);
    if (!run) return { found: false };
    return {
      found: true,
      status: run.status,
      ...(run.returnValue !== null ? { returnValue: JSON.parse(run.returnValue) as unknown } : {}),
      ...(run.error === null ? {} : { error: JSON.parse(run.error) as { name?: string; message?: string } }),
    };
  }
}

/** A sunset date as orchestration names it (YYYY-MM-DD): it is written into the run's logs. */
const isSunset = (value: unknown): value is string => typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value);

function started(queued: QueuedJob): FunctionRunStartReply {
  return { started: true, runId: queued.runId, jobId: queued.jobId, rateLimited: queued.status === 'rate_limited' };
}
