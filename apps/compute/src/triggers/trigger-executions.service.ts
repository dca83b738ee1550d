import { Injectable } from '@nestjs/common';
import type { KeyRing } from '@strata/crypto';
import type { Tx, WorkspaceScope } from '@strata/db';
import { keyRingOf, StrataException } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { FunctionsRepository } from '../functions/functions.repository.js';
import type { JsonObject } from '../json.js';
import { ExecutionBudget } from '../runs/execution-budget.js';
import { RunQueue, type QueuedJob, type RunRequest } from '../runs/run-queue.js';
import type { ExecutionSource } from '../runs/run-status.js';
import type { NewRun } from '../runs/runs.repository.js';
import { openTriggerParams, sealedParamNames, triggerBindings } from './trigger-params.js';
import type { TriggerEntity } from './trigger.entity.js';
import { TRIGGER_NOT_FOUND } from './triggers.service.js';
import { TriggersRepository, type FunctionVersionRef } from './triggers.repository.js';
import { MonthlyExecutions } from '../usage/monthly-executions.js';

/** How long an http-trigger's run may take (spec: "runs up to 5 minutes"). */
export const HTTP_TRIGGER_WALL_MS = 5 * 60_000;

/**
 * Runs a trigger's function: the current version of its code, its parameters
 * (sealed ones opened) as `triggerParams`, and the invocation's input as
 * `executionParams`. Every execution by a trigger goes through here.
 */
/** The system default trigger has no function: it runs the code a test run carries. */
export const SYSTEM_TRIGGER_NOT_EXECUTABLE =
  'The system default trigger runs test code only (POST /compute-functions/test); it cannot be executed.';

@Injectable()
export class TriggerExecutions {
  private readonly ring: KeyRing;

  constructor(
    private readonly triggers: TriggersRepository,
    private readonly functions: FunctionsRepository,
    private readonly queue: RunQueue,
    private readonly budget: ExecutionBudget,
    private readonly monthly: MonthlyExecutions,
    config: ComputeConfig,
  ) {
    this.ring = keyRingOf(config);
  }

  /** `POST /function-triggers/{id}/execute`: on-demand triggers only; the body is executionParams, unwrapped. */
  async executeOnDemand(scope: WorkspaceScope, by: string, id: string, body: unknown): Promise<string> {
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
      throw StrataException.validation([{ field: 'body', message: 'The body, when given, must be a JSON object.' }]);
    }
    const trigger = await this.onDemand(scope, id);
    // The plan's executions this month (docs/plans.md): refused 403 QUOTA_EXCEEDED, no run recorded.
    await this.monthly.ensureRoom(scope);
    const queued = await this.run(scope, trigger, (body ?? {}) as JsonObject, 'trigger', by);
    return queued.jobId;
  }

  /** A live on-demand trigger that is not paused: what /execute and api.invokeTrigger may start. */
  async onDemand(scope: WorkspaceScope, id: string): Promise<TriggerEntity> {
    const trigger = await this.triggers.find(scope, id);
    if (!trigger) throw StrataException.notFound(TRIGGER_NOT_FOUND);
    if (trigger.isSystem) throw StrataException.invalid('id', SYSTEM_TRIGGER_NOT_EXECUTABLE);
    if (trigger.executionType !== 'on-demand') {
      throw StrataException.invalid(
        'id',
        `Only on-demand triggers can be executed this way; this trigger is ${trigger.executionType}.`,
      );
    }
    if (trigger.paused) throw StrataException.conflict('Trigger is paused.');
    return trigger;
  }

  /** Queues a run of the trigger's function with `executionParams` (`depth`: how deep in api.invokeTrigger calls). */
  async run(
    scope: WorkspaceScope,
    trigger: TriggerEntity,
    executionParams: JsonObject,
    source: ExecutionSource,
    by: string,
    depth = 0,
    rateLimited = false,
  ): Promise<QueuedJob> {
    const request = await this.runRequest(scope, trigger, executionParams, source, by, depth);
    return this.queue.enqueue(scope, { ...request, rateLimited });
  }

  /**
   * The run of one record event for one trigger, at most once: offered to a
   * worker first (`offer`: whether one took it), queued otherwise. The
   * executions limit is counted first, for every delivery of the event (a
   * redelivery, rare, counts again: it errs on the strict side); a refused
   * run is recorded as `rate_limited`.
   */
  async runForEvent(
    scope: WorkspaceScope,
    trigger: TriggerEntity,
    fn: FunctionVersionRef,
    event: JsonObject,
    eventId: string,
    offer: (run: NewRun) => Promise<boolean>,
  ): Promise<void> {
    const request = await this.runRequest(scope, trigger, event, 'trigger', 'system:events', 0, fn);
    const run = this.queue.prepare({ ...request, rateLimited: !(await this.budget.take(scope)) });
    if (await offer(run)) return;
    await this.queue.enqueueOnce(scope, run, { eventId, triggerId: trigger.id });
  }

  /**
   * The runs of many captured arrivals of one http-trigger (`fn`: its function's
   * current version, read with it), each at most once per job id (undefined for
   * an arrival queued already): what a batch from inbound costs is one statement
   * and one write to NATS, not a few per arrival.
   */
  async runForArrivals(
    scope: WorkspaceScope,
    trigger: TriggerEntity,
    fn: FunctionVersionRef | undefined,
    arrivals: readonly { readonly jobId: string; readonly executionParams: JsonObject }[],
  ) {
    if (!fn) throw StrataException.notFound(`Function not found for trigger: ${trigger.id}`);
    const base = await this.runRequest(scope, trigger, {}, 'http-trigger', 'system:inbound', 0, fn);
    return this.queue.enqueueJobsOnce(
      scope,
      arrivals.map((arrival) => ({
        ...base,
        params: { ...base.params, executionParams: arrival.executionParams },
        triggerId: trigger.id,
        jobId: arrival.jobId,
        limits: { wallMs: HTTP_TRIGGER_WALL_MS },
      })),
      async () => !(await this.budget.take(scope)),
    );
  }

  /** The run of a scheduled occurrence, inserted in `tx` (the scheduler's claim); publish it after commit. */
  async runScheduledIn(
    scope: WorkspaceScope,
    tx: Tx,
    trigger: TriggerEntity,
    fn: FunctionVersionRef,
    due: Date,
    now: Date,
  ) {
    const request = await this.runRequest(
      scope,
      trigger,
      { scheduledFor: due.toISOString(), firedAt: now.toISOString() },
      'scheduled',
      'system:scheduler',
      0,
      fn,
    );
    return this.queue.insertIn(scope, tx, { ...request, rateLimited: !(await this.budget.take(scope, tx)) });
  }

  /** `publish` for the runs of many workspaces, in one write. */
  async publishAll(queued: readonly { readonly scope: WorkspaceScope; readonly job: QueuedJob }[]): Promise<void> {
    await this.queue.publishMany(queued);
  }

  /** What a run of the trigger's function is made of: its current code, its parameters (opened), the input. */
  async runRequest(
    scope: WorkspaceScope,
    trigger: TriggerEntity,
    executionParams: JsonObject,
    source: ExecutionSource,
    by: string,
    depth: number,
    /** The function's current version when the caller read it with the trigger; read here otherwise. */
    loaded?: FunctionVersionRef,
  ): Promise<RunRequest> {
    const fn = loaded ?? (trigger.functionId ? await this.functions.find(scope, trigger.functionId) : undefined);
    if (!fn) throw StrataException.notFound(`Function not found for trigger: ${trigger.id}`);
    const stored = (trigger.metadata['params'] ?? {}) as JsonObject;
    return {
      target: { kind: 'function', functionId: fn.id, version: fn.version, codeHash: fn.codeHash },
      triggerId: trigger.id,
      source,
      params: {
        triggerParams: openTriggerParams(this.ring, triggerBindings(trigger.id), stored),
        executionParams,
        secretParams: sealedParamNames(stored),
      },
      context: {
        trigger: { id: trigger.id, name: trigger.name, executionType: trigger.executionType },
        invocationDepth: depth,
      },
      by,
    };
  }
}
