import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { KeyRing } from '@strata/crypto';
import type { Tx, WorkspaceScope } from '@strata/db';
import { Clock, keyRingOf } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import type { JsonObject } from '../json.js';
import type { CarriedRun, ComputeJob } from '@strata/contracts';
import { carriedRun } from './carried-run.js';
import { RunJobs } from './run-jobs.js';
import { defaultRunLimits, type RunLimits } from './run-limits.js';
import { sealRunParams, type RunParams } from './run-params.js';
import type { ExecutionSource } from './run-status.js';
import { RunsRepository, type HeldRun, type NewRun } from './runs.repository.js';

/** What to run: a saved function version, or (test runs) code of its own. */
export type RunTarget =
  | { readonly kind: 'function'; readonly functionId: string; readonly version: number; readonly codeHash: string }
  | { readonly kind: 'code'; readonly code: string; readonly codeHash: string };

export interface RunRequest {
  readonly target: RunTarget;
  readonly triggerId: string | null;
  readonly source: ExecutionSource;
  readonly params: RunParams;
  /** What the run record shows of its context (trigger, environment), besides the limits. */
  readonly context: JsonObject;
  readonly by: string;
  readonly rerunOf?: { readonly runId: string; readonly by: string; readonly reason: string | null };
  /** The executions limit refused it: recorded as `rate_limited`, no job published. */
  readonly rateLimited?: boolean;
  /** The job id to give the run (an http-trigger arrival's, answered before the run exists); a new one otherwise. */
  readonly jobId?: string;
  /** Limits of this run that differ from the workspace's defaults (an endpoint's timeoutMs as wallMs). */
  readonly limits?: Partial<RunLimits>;
}

/** A run queued for one (event, trigger) pair, and whether its job reached the workers' queue now. */
export interface OnceQueued extends QueuedJob {
  /** Otherwise the sweep publishes it. */
  published: boolean;
}

export interface QueuedJob {
  jobId: string;
  runId: string;
  /** `queued`, or `rate_limited` when the executions limit refused it (recorded, not started). */
  status: 'queued' | 'rate_limited';
  queuedAt: string;
}

/** Queues executions: every execution of a function goes through here (tests now, triggers next). */
@Injectable()
export class RunQueue {
  private readonly ring: KeyRing;
  /** The run each job inserted with `insertIn` carries once it is published (`publish`, `publishMany`). */
  private readonly carried = new WeakMap<QueuedJob, CarriedRun>();

  constructor(
    private readonly runs: RunsRepository,
    private readonly jobs: RunJobs,
    private readonly config: ComputeConfig,
    private readonly clock: Clock,
  ) {
    this.ring = keyRingOf(config);
  }

  async enqueue(scope: WorkspaceScope, request: RunRequest): Promise<QueuedJob> {
    const queued = this.newRun(request);
    const run = await this.runs.insert(scope, undefined, queued);
    if (run.status === 'queued') await this.jobs.publish(scope, jobOf(scope, queued));
    return { jobId: run.jobId, runId: run.id, status: statusOf(run.status), queuedAt: run.queuedAt.toISOString() };
  }

  /**
   * An endpoint run to hand straight to a worker, never queued, and not written
   * yet (the worker records it as it starts it, or the API first when the run
   * cannot travel in the dispatch): `running`, held by `holder` until a worker
   * takes it or `leaseUntil` passes (then the sweep fails it as WorkerLost).
   */
  dispatched(request: RunRequest, holder: string, leaseUntil: Date): HeldRun {
    return { ...this.newRun(request), held: { by: holder, until: leaseUntil } };
  }

  /** A run the executions limit refused, not written yet: `rate_limited`, never started. */
  refused(request: RunRequest): NewRun {
    return this.newRun({ ...request, rateLimited: true });
  }

  private rateLimitedError(): string {
    return JSON.stringify({
      name: 'RateLimited',
      message:
        `The workspace reached its limit of ${this.config.RATE_LIMIT_EXECUTE_PER_MINUTE} function executions per minute, ` +
        "or its plan's function executions this month (GET /workspace/api/v1/workspaces/{slug}/usage); this run was not started.",
    });
  }

  /** Inserts a queued run in `tx`; the caller publishes its job (`publish`) once `tx` has committed. */
  async insertIn(scope: WorkspaceScope, tx: Tx, request: RunRequest): Promise<QueuedJob> {
    const queued = this.newRun(request);
    const run = await this.runs.insert(scope, tx, queued);
    const job: QueuedJob = {
      jobId: run.jobId,
      runId: run.id,
      status: statusOf(run.status),
      queuedAt: run.queuedAt.toISOString(),
    };
    const carried = carriedRun(queued, { withCode: true });
    if (carried) this.carried.set(job, carried);
    return job;
  }

  /** `publish` for the runs of many workspaces inserted with `insertIn`, in one write. */
  async publishMany(queued: readonly { readonly scope: WorkspaceScope; readonly job: QueuedJob }[]): Promise<void> {
    await this.jobs.publishMany(
      queued
        .filter(({ job }) => job.status === 'queued')
        .map(({ scope, job }) => ({ scope, job: this.jobOfInserted(scope.workspace, job) })),
    );
  }

  /** Publishes the job of a run inserted with `insertIn` (a failure is left to the sweep). */
  async publish(scope: WorkspaceScope, job: QueuedJob): Promise<void> {
    if (job.status !== 'queued') return;
    await this.jobs.publish(scope, this.jobOfInserted(scope.workspace, job));
  }

  /** The job of a run inserted with `insertIn`, carrying the run when it fits in a message. */
  private jobOfInserted(workspace: string, job: QueuedJob): ComputeJob {
    return computeJob(workspace, job.runId, this.carried.get(job));
  }

  /**
   * The run of one (event, trigger) pair, not written yet: offered straight to
   * a worker first (`EventRunOffers`), queued with `enqueueOnce` otherwise.
   * Refused by the executions limit (`rateLimited`), it is `rate_limited`.
   */
  prepare(request: RunRequest): NewRun {
    return this.newRun(request);
  }

  /**
   * Queues the run of one (event, trigger) pair at most once: the pair and the
   * run are one statement that writes neither when the pair started its run
   * before (a redelivered event, or a worker that took the run when it was
   * offered), so it starts nothing again. Undefined when the pair already
   * started its run.
   */
  async enqueueOnce(
    scope: WorkspaceScope,
    prepared: NewRun,
    pair: { readonly eventId: string; readonly triggerId: string },
  ): Promise<OnceQueued | undefined> {
    const run = await this.runs.insertForEvent(scope, prepared, { ...pair, at: this.clock.now() });
    if (!run) return undefined;
    const published = run.status === 'queued' && (await this.jobs.publish(scope, jobOf(scope, prepared)));
    return {
      jobId: run.jobId,
      runId: run.id,
      status: statusOf(run.status),
      queuedAt: run.queuedAt.toISOString(),
      published,
    };
  }

  /**
   * Queues many runs whose job ids were given by the caller (a batch of
   * captured arrivals), each at most once: the runs are one statement that
   * skips a job id already taken, so an arrival dispatched again finds its run
   * instead of starting a second one. The executions limit is counted first,
   * once per run asked for (a rare repeat is counted too: it errs on the strict
   * side), then the jobs are published together. Each answer is in the order
   * asked; undefined for a job id that has a run already (or appears twice).
   */
  async enqueueJobsOnce(
    scope: WorkspaceScope,
    requests: readonly (RunRequest & { readonly jobId: string })[],
    overBudget: () => Promise<boolean>,
  ): Promise<(OnceQueued | undefined)[]> {
    const firsts = new Map<string, number>();
    requests.forEach((r, i) => {
      if (!firsts.has(r.jobId)) firsts.set(r.jobId, i);
    });
    const candidates = requests
      .map((request, i) => ({ request, i }))
      .filter(({ request, i }) => firsts.get(request.jobId) === i);
    const refused = await Promise.all(candidates.map(() => overBudget()));
    const newRuns = candidates.map(({ request }, k) => this.newRun({ ...request, rateLimited: refused[k]! }));
    const written = await this.runs.insertNewJobs(scope, newRuns);
    const queued = written.filter((run) => run.status === 'queued');
    const byId = new Map(newRuns.map((run) => [run.id, run]));
    const published = await this.jobs.publishMany(
      queued.map((run) => ({ scope, job: jobOf(scope, byId.get(run.id)!) })),
    );
    const publishedRuns = new Set(queued.filter((_, k) => published[k]).map((run) => run.id));
    const byJob = new Map(written.map((run) => [run.jobId, run]));
    return requests.map((request, i) => {
      const run = byJob.get(request.jobId);
      if (!run || firsts.get(request.jobId) !== i) return undefined;
      return {
        jobId: run.jobId,
        runId: run.id,
        status: statusOf(run.status),
        queuedAt: run.queuedAt.toISOString(),
        published: publishedRuns.has(run.id),
      };
    });
  }

  private newRun(request: RunRequest, runId: string = randomUUID()): NewRun {
    const { sealed, keyVersion } = sealRunParams(this.ring, runId, request.params);
    const limits = { ...defaultRunLimits(this.config), ...request.limits };
    const target = request.target;
    return {
      id: runId,
      jobId: request.jobId ?? randomUUID(),
      functionId: target.kind === 'function' ? target.functionId : null,
      functionVersion: target.kind === 'function' ? target.version : null,
      functionCodeHash: target.codeHash,
      code: target.kind === 'code' ? target.code : null,
      triggerId: request.triggerId,
      executionSource: request.source,
      sealedParams: sealed,
      paramsKeyVersion: keyVersion,
      executionContext: { ...request.context, environment: { runtime: 'isolated-vm', limits: { ...limits } } },
      limits: { ...limits },
      createdBy: request.by,
      queuedAt: this.clock.now(),
      ...(request.rerunOf ? { rerunOf: request.rerunOf } : {}),
      ...(request.rateLimited ? { refused: { error: this.rateLimitedError(), at: this.clock.now() } } : {}),
    };
  }
}

/** The job of a queued run, carrying the run when it fits in a message (`carriedRun`). */
function jobOf(scope: WorkspaceScope, run: NewRun): ComputeJob {
  return computeJob(scope.workspace, run.id, carriedRun(run, { withCode: true }));
}

function computeJob(workspace: string, runId: string, carried: CarriedRun | undefined): ComputeJob {
  return { runId, workspaceSlug: workspace, ...(carried ? { run: carried } : {}) };
}

const statusOf = (status: string): QueuedJob['status'] => (status === 'rate_limited' ? 'rate_limited' : 'queued');
