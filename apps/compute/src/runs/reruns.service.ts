import { Injectable } from '@nestjs/common';
import { ID_FORMATS } from '@strata/contracts';
import type { KeyRing } from '@strata/crypto';
import { Transactions, type WorkspaceScope } from '@strata/db';
import { keyRingOf, StrataException } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { codeHash } from '../functions/function-code.js';
import { FunctionsRepository } from '../functions/functions.repository.js';
import type { JsonObject } from '../json.js';
import { openTriggerParams, sealedParamNames, triggerBindings } from '../triggers/trigger-params.js';
import { TriggersRepository } from '../triggers/triggers.repository.js';
import type { RerunRequest } from './dto/rerun.requests.js';
import type { RunLimits } from './run-limits.js';
import { openRunParams, type RunParams } from './run-params.js';
import type { EndpointRequest } from '@strata/sandbox';
import { RunQueue, type RunTarget } from './run-queue.js';
import { runView } from './run-view.js';
import { RunsRepository } from './runs.repository.js';

/** The spec's re-run messages (all 400). */
export const RERUN = {
  invalidId: 'Invalid run ID.',
  notFound: 'Original run not found.',
  otherWorkspace: 'Run does not belong to this workspace.',
  noParameters: 'Original run has no parameters stored.',
  undecryptable: 'Failed to decrypt original run parameters.',
  triggerGone: 'Original trigger not found. It may have been deleted.',
  functionGone: (triggerId: string) => `Function not found for trigger: ${triggerId}`,
} as const;

const refuse = (message: string): StrataException => StrataException.invalid('id', message);

/**
 * An endpoint run's request again: `overrideParams` merged over its payload when
 * that is an object (an endpoint function reads `context.req.payload`, not executionParams).
 */
function rerunRequest(request: EndpointRequest, overrides: Record<string, unknown> | undefined): EndpointRequest {
  const payload = request.payload;
  if (!overrides || typeof payload !== 'object' || payload === null || Array.isArray(payload)) return request;
  return { ...request, payload: { ...payload, ...(overrides as JsonObject) } };
}

/**
 * Re-runs: a new run of a past run's trigger and function with the parameters it
 * had (sealed, opened here), `overrideParams` merged over its executionParams, and
 * the trigger's current parameters. The original's rerunCount grows in the re-run's
 * transaction.
 */
@Injectable()
export class RerunsService {
  private readonly ring: KeyRing;

  constructor(
    private readonly runs: RunsRepository,
    private readonly triggers: TriggersRepository,
    private readonly functions: FunctionsRepository,
    private readonly queue: RunQueue,
    private readonly transactions: Transactions,
    config: ComputeConfig,
  ) {
    this.ring = keyRingOf(config);
  }

  async rerun(scope: WorkspaceScope, by: string, id: string, body: RerunRequest) {
    const original = await this.original(scope, id);
    if (!original.params) throw refuse(RERUN.noParameters);
    let params: RunParams;
    try {
      params = openRunParams(this.ring, original.id, original.params);
    } catch {
      throw refuse(RERUN.undecryptable);
    }
    const trigger = original.triggerId ? await this.triggers.find(scope, original.triggerId) : undefined;
    if (!trigger) throw refuse(RERUN.triggerGone);
    // A paused trigger executes nothing, a re-run included: the spec re-runs an on-demand trigger's run
    // through its /execute path, which refuses a paused trigger the same way.
    if (trigger.paused) throw StrataException.conflict('Trigger is paused.');
    const target = await this.targetOf(scope, original.code, original.functionId, trigger.id);
    const stored = (trigger.metadata['params'] ?? {}) as JsonObject;
    const executionParams = {
      ...(typeof params.executionParams === 'object' && params.executionParams !== null ? params.executionParams : {}),
      ...(body.overrideParams ?? {}),
    } as JsonObject;
    const queued = await this.transactions.run(async (tx) => {
      const job = await this.queue.insertIn(scope, tx, {
        target,
        triggerId: trigger.id,
        source: 'rerun',
        params: {
          // The trigger's parameters as they are now (a rotated secret is the new one).
          ...(trigger.isSystem
            ? {
                triggerParams: params.triggerParams ?? {},
                ...(params.secretParams ? { secretParams: params.secretParams } : {}),
              }
            : {
                triggerParams: openTriggerParams(this.ring, triggerBindings(trigger.id), stored),
                secretParams: sealedParamNames(stored),
              }),
          executionParams,
          ...(params.request ? { request: rerunRequest(params.request, body.overrideParams) } : {}),
          // A compute step's run read again as it was: the old form of its steps still answered.
          ...(params.legacyStepOutputs ? { legacyStepOutputs: params.legacyStepOutputs } : {}),
        },
        context: {
          trigger: { id: trigger.id, name: trigger.name, executionType: trigger.executionType },
          invocationDepth: 0,
          rerun: { of: original.id, useLatestCode: body.useLatestCode ?? false },
        },
        by,
        rerunOf: { runId: original.id, by, reason: body.reason ?? null },
        limits: timeBudgetOf(original.limits),
      });
      await this.runs.countRerun(scope, tx, original.id);
      return job;
    });
    await this.queue.publish(scope, queued);
    return { jobId: queued.jobId, message: `Re-run of ${original.id} queued.` };
  }

  async history(scope: WorkspaceScope, id: string) {
    const original = await this.original(scope, id);
    const reruns = await this.runs.reruns(scope, id);
    return {
      originalRunId: original.id,
      rerunCount: original.rerunCount,
      reruns: reruns.map((r) => runView(r)),
    };
  }

  /**
   * The run to re-run, or the spec's refusal: an id that is not one, a run that
   * does not exist, or one of another workspace (whose existence is all the
   * answer says: nothing of it is read).
   */
  private async original(scope: WorkspaceScope, id: string) {
    if (!ID_FORMATS.uuid.test(id)) throw refuse(RERUN.invalidId);
    const original = await this.runs.find(scope, id);
    if (original) return original;
    throw refuse((await this.runs.belongsElsewhere(scope, id)) ? RERUN.otherWorkspace : RERUN.notFound);
  }

  /**
   * What the re-run executes: a test run's own code, or the function's current
   * code, as the spec's re-run describes (`useLatestCode` defaults to false, and
   * the current behaviour always uses the current function code): a re-run after
   * a fix runs the fix.
   */
  private async targetOf(
    scope: WorkspaceScope,
    code: string | null,
    functionId: string | null,
    triggerId: string,
  ): Promise<RunTarget> {
    if (code !== null) return { kind: 'code', code, codeHash: codeHash(code) };
    const fn = functionId ? await this.functions.find(scope, functionId) : undefined;
    if (!fn) throw refuse(RERUN.functionGone(triggerId));
    return { kind: 'function', functionId: fn.id, version: fn.version, codeHash: fn.codeHash };
  }
}

/**
 * The time limits of the run repeated: a re-run has the budget of its kind (an HTTP-trigger
 * run's 5 minutes, an endpoint's `timeoutMs`), not the default; the other limits follow the
 * current configuration.
 */
function timeBudgetOf(limits: Record<string, number> | null | undefined): Partial<RunLimits> {
  const budget: { wallMs?: number; cpuMs?: number } = {};
  if (typeof limits?.['wallMs'] === 'number') budget.wallMs = limits['wallMs'];
  if (typeof limits?.['cpuMs'] === 'number') budget.cpuMs = limits['cpuMs'];
  return budget;
}
