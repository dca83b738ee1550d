import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { KeyRing } from '@strata/crypto';
import type { WorkspaceScope } from '@strata/db';
import { Clock, keyRingOf } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import type { JsonObject } from '../json.js';
import { RunJobs } from './run-jobs.js';
import { defaultRunLimits } from './run-limits.js';
import { sealRunParams, type RunParams } from './run-params.js';
import type { ExecutionSource } from './run-status.js';
import { RunsRepository } from './runs.repository.js';

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
}

export interface QueuedJob {
  jobId: string;
  runId: string;
  status: 'queued';
  queuedAt: string;
}

/** Queues executions: every execution of a function goes through here (tests now, triggers next). */
@Injectable()
export class RunQueue {
  private readonly ring: KeyRing;

  constructor(
    private readonly runs: RunsRepository,
    private readonly jobs: RunJobs,
    private readonly config: ComputeConfig,
    private readonly clock: Clock,
  ) {
    this.ring = keyRingOf(config);
  }

  async enqueue(scope: WorkspaceScope, request: RunRequest): Promise<QueuedJob> {
    const runId = randomUUID();
    const { sealed, keyVersion } = sealRunParams(this.ring, runId, request.params);
    const limits = defaultRunLimits(this.config);
    const target = request.target;
    const run = await this.runs.insert(scope, undefined, {
      id: runId,
      jobId: randomUUID(),
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
    });
    await this.jobs.publish({ runId, workspaceSlug: scope.workspace });
    return { jobId: run.jobId, runId, status: 'queued', queuedAt: run.queuedAt.toISOString() };
  }
}
