import { newOrchestrationRunId, newOrchestrationStepId } from '@strata/crypto';
import type { FunctionRunStart, FunctionRunStartReply, FunctionRunStatusReply } from '@strata/contracts';
import {
  computeOutcomeOf,
  DEFAULT_COMPUTE_TIMEOUT_MS,
  type ComputeOutcome,
  type ComputeStep,
  type JsonValue,
  scopeByPath,
  type RunScope,
  type ScopeByPath,
  type Step,
  type Transition,
} from '@strata/workflow';
import { v5 as nameBasedUuid } from 'uuid';
import type { RunRow, StepRow } from './run-rows.js';

/** The UUID namespace of compute steps' job ids (RFC 9562 name-based: one job id per step attempt, always the same). */
const STEP_ATTEMPT_JOBS = '6f1c8e2a-3b7d-5c41-9a0e-2d4b8f6c1e73';

/**
 * The job id of one attempt of one visit of a compute step of a run: the same
 * every time the engine asks compute to start it, so a start repeated after a
 * lost answer or a rolled-back claim finds the run started first instead of a
 * second one. `visit` is how many steps the run had executed when the attempt
 * began (`executedSteps.length`): a loop's next pass through the step, and a
 * retry of a failed run, are new visits and start the function anew (before,
 * both were answered with the first run's outcome).
 */
export function stepAttemptJobId(runId: string, stepId: string, attempt: number, visit: number): string {
  return nameBasedUuid(`${runId}/${stepId}/${attempt}/${visit}`, STEP_ATTEMPT_JOBS);
}

/**
 * What both engines do to a run's rows as it moves: the embedded engine in its
 * claim's transaction, the Temporal activities in theirs. Pure: the caller reads
 * and writes the rows.
 */

/** What starts a run: its input and what started it. */
export interface RunStart {
  readonly input: JsonValue;
  readonly correlationId: string | null;
  readonly triggerType: string;
  readonly triggerMetadata: Record<string, JsonValue>;
}

/** A new run of the orchestration's current version: `pending`, due at once. */
export function pendingRun(
  scope: { readonly workspace: string },
  orchestration: { readonly id: string; readonly version: number },
  start: RunStart,
  now: Date,
): RunRow {
  return {
    id: newOrchestrationRunId(),
    workspace_slug: scope.workspace,
    orchestration_id: orchestration.id,
    orchestration_version: orchestration.version,
    status: 'pending',
    current_step_id: null,
    current_attempt: 1,
    input: start.input,
    context: {},
    step_outputs: {},
    correlation_id: start.correlationId,
    trigger_type: start.triggerType,
    trigger_metadata: start.triggerMetadata,
    has_errors: false,
    delay_step_count: 0,
    failure_reason: null,
    executed_steps: [],
    errors: [],
    due_at: now,
    created_at: now,
    started_at: null,
    completed_at: null,
    ttl_expires_at: null,
    workflow_id: null,
  };
}

/** What a decision's paths read: `input.`, `context.`, `steps.<id>.output.`. */
export function scopeOf(run: RunRow): RunScope {
  return { input: run.input, context: run.context, steps: run.step_outputs };
}

/**
 * The scope in the paths' shape (`steps.<id>.output`): what a compute step's function receives,
 * and the `input` a compute or decision step row records.
 */
export function stepInputOf(run: RunRow): ScopeByPath {
  return scopeByPath(scopeOf(run));
}

/**
 * Until this date a compute step's function may still read an earlier step's output the old way,
 * `executionParams.steps.<id>.<field>` (before 2026-11-29 the output itself was at `steps.<id>`),
 * each step's first such read logging a deprecation warning in the function run's logs
 * (docs/orchestration.md). A release after it stops sending `legacyStepOutputs`.
 */
export const LEGACY_STEP_OUTPUTS_SUNSET = '2027-03-01';

/** A pending run starts at its first step. */
export function startRun(run: RunRow, steps: readonly Step[], now: Date): void {
  if (run.status !== 'pending') return;
  run.status = 'running';
  run.started_at = now;
  run.current_step_id = steps[0]!.id;
  run.current_attempt = 1;
}

/** Whether the run has ended (completed, failed or cancelled): nothing may move it any more. */
export function isClosed(run: RunRow): boolean {
  return run.status === 'completed' || run.status === 'failed';
}

/** Ends the run by a go-to-nothing, fail or end transition. */
export function finishRun(run: RunRow, t: Transition, now: Date, retentionMs: number): void {
  run.status = t.kind === 'fail' ? 'failed' : 'completed';
  if (t.kind === 'fail') run.failure_reason = t.reason;
  if (t.kind === 'end') run.has_errors = true;
  run.current_step_id = null;
  run.completed_at = now;
  run.ttl_expires_at = new Date(now.getTime() + retentionMs);
  run.due_at = null;
}

/** A run-step row of the run's current attempt. */
export function newStepRow(run: RunRow, step: Step, now: Date, fields: Partial<StepRow>): StepRow {
  return {
    id: newOrchestrationStepId(),
    workspace_slug: run.workspace_slug,
    run_id: run.id,
    step_id: step.id,
    step_type: step.type,
    attempt: run.current_attempt,
    status: 'running',
    input: null,
    output: null,
    decision_result: null,
    delay_config: null,
    error: null,
    function_id: null,
    function_run_id: null,
    execution_id: null,
    started_at: now,
    completed_at: null,
    ...fields,
  };
}

/** What compute is asked to run for attempt `run.current_attempt` of a compute step. */
export function functionRunOf(run: RunRow, step: ComputeStep): Omit<FunctionRunStart, 'workspaceSlug'> {
  return {
    functionId: step.functionId,
    executionParams: {
      ...stepInputOf(run),
      orchestration: { runId: run.id, stepId: step.id, attempt: run.current_attempt },
    },
    legacyStepOutputs: { sunset: LEGACY_STEP_OUTPUTS_SUNSET },
    timeoutMs: step.timeoutMs ?? DEFAULT_COMPUTE_TIMEOUT_MS,
    origin: { orchestrationId: run.orchestration_id, runId: run.id, stepId: step.id, attempt: run.current_attempt },
    jobId: stepAttemptJobId(run.id, step.id, run.current_attempt, run.executed_steps.length),
  };
}

/**
 * The step row of an attempt compute was asked to start: `running` with its
 * function run, or already `failed` when compute refused to start it (unknown
 * function, executions limit). The outcome is there for a refused start.
 */
export function startedStepRow(
  run: RunRow,
  step: ComputeStep,
  now: Date,
  started: FunctionRunStartReply,
): { row: StepRow; refused?: ComputeOutcome } {
  const row = startingStepRow(run, step, now);
  const refused = applyStartReply(row, started, now);
  return refused ? { row, refused } : { row };
}

/**
 * The row of a compute attempt recorded before compute is asked to start it
 * (the embedded engine's first phase): `running`, its job id known, its function
 * run not yet.
 */
export function startingStepRow(run: RunRow, step: ComputeStep, now: Date): StepRow {
  return newStepRow(run, step, now, {
    status: 'running',
    input: stepInputOf(run) as unknown as JsonValue,
    function_id: step.functionId,
    execution_id: functionRunOf(run, step).jobId,
  });
}

/**
 * Compute's answer to a start, on the attempt's row: its function run, or the
 * row failed when compute refused (the outcome answered then).
 */
export function applyStartReply(row: StepRow, started: FunctionRunStartReply, now: Date): ComputeOutcome | undefined {
  if (started.started) {
    row.function_run_id = started.runId;
    row.execution_id = started.jobId;
  }
  if (started.started && !started.rateLimited) return undefined;
  const error = started.started
    ? { message: 'The workspace reached its function executions limit', code: 'RATE_LIMITED' }
    : { message: started.reason, code: started.code ?? 'FUNCTION_NOT_FOUND' };
  row.status = 'failed';
  row.error = error;
  row.completed_at = now;
  return { ok: false, error };
}

/** How a compute step's function run ended, from compute's answer; undefined while it is queued or running. */
export function outcomeOfStatus(status: FunctionRunStatusReply): ComputeOutcome | undefined {
  if (!status.found) return { ok: false, error: { message: 'The function run is gone', code: 'FUNCTION_RUN_LOST' } };
  if (status.status === 'queued' || status.status === 'running') return undefined;
  return computeOutcomeOf({
    status: status.status,
    returnValue: status.returnValue as JsonValue | undefined,
    error: status.error ?? null,
  });
}

/** Records an attempt's outcome on its row and on the run (its output under `steps.<id>`, or its error). */
export function recordComputeOutcome(run: RunRow, row: StepRow, outcome: ComputeOutcome, now: Date): void {
  if (row.status === 'running') {
    row.status = outcome.ok ? 'succeeded' : 'failed';
    row.completed_at = now;
    if (outcome.ok) row.output = outcome.output;
    else row.error = outcome.error;
  }
  run.executed_steps.push(row.step_id);
  if (outcome.ok) run.step_outputs = { ...run.step_outputs, [row.step_id]: outcome.output };
  else {
    run.has_errors = true;
    run.errors = [...run.errors, { stepId: row.step_id, ...outcome.error }];
  }
}

/** A delay step's `waiting` row, resuming at `resumeAt`. */
export function delayStepRow(run: RunRow, step: Step & { delayMs: number }, now: Date, resumeAt: Date): StepRow {
  return newStepRow(run, step, now, {
    status: 'waiting',
    delay_config: { delayMs: step.delayMs, resumeAt: resumeAt.toISOString(), resumedAt: null },
  });
}

/** A delay ended: its row succeeds and the run is running again. */
export function resumeFromDelay(run: RunRow, row: StepRow, now: Date): void {
  row.status = 'succeeded';
  row.completed_at = now;
  row.delay_config = { ...row.delay_config!, resumedAt: now.toISOString() };
  run.status = 'running';
  run.executed_steps.push(row.step_id);
}
