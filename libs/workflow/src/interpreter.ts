import { evaluateDecision, type DecisionResult } from './decision.js';
import {
  MAX_BACKOFF_MS,
  MAX_EXECUTED_STEPS,
  type ComputeStep,
  type DecisionStep,
  type DelayStep,
  type JsonValue,
  type RetryPolicy,
  type RunScope,
  type Step,
} from './types.js';

/** What the engine does after a step: the same answer on the embedded engine and in a Temporal workflow. */
export type Transition =
  /** Go on at `nextStepId`; null completes the run. */
  | { readonly kind: 'go'; readonly nextStepId: string | null }
  /** Run the compute step again as `attempt` after `delayMs`. */
  | { readonly kind: 'retry'; readonly attempt: number; readonly delayMs: number }
  /** The run is `waiting` for `delayMs`, then goes on at `nextStepId`. */
  | { readonly kind: 'wait'; readonly delayMs: number; readonly nextStepId: string | null }
  /** The run fails (`failureReason`). */
  | { readonly kind: 'fail'; readonly reason: string }
  /** The run completes early (a failed step with `onFailure: end`); `reason` is kept in its errors. */
  | { readonly kind: 'end'; readonly reason: string };

export interface StepError {
  readonly message: string;
  readonly code: string;
}

/** How a compute step's function run ended, as the compute service recorded it. */
export interface FunctionRunEnd {
  readonly status: string;
  readonly returnValue: JsonValue | undefined;
  readonly error?: { readonly name?: string; readonly message?: string } | null;
}

export type ComputeOutcome =
  { readonly ok: true; readonly output: JsonValue } | { readonly ok: false; readonly error: StepError };

/**
 * A function run as a step's outcome. It succeeded when the run succeeded and
 * did not return `{success: false}`; its output is `data` of a `{success: true,
 * data}` return, or the whole return value of any other. A throw, a `{success:
 * false, error}` return, a timeout or a lost worker fails the attempt (the spec's
 * note that a structured failure counts as success is not followed: a failure the
 * function reports is a failure).
 */
export function computeOutcomeOf(run: FunctionRunEnd): ComputeOutcome {
  const value = run.returnValue ?? null;
  const structured = typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
  if (run.status === 'succeeded' && structured?.['success'] !== false) {
    const output = structured?.['success'] === true && Object.hasOwn(structured, 'data') ? structured['data']! : value;
    return { ok: true, output };
  }
  const reported = structured?.['success'] === false ? structured['error'] : undefined;
  const message =
    typeof reported === 'string'
      ? reported
      : (run.error?.message ??
        (run.status === 'succeeded' ? 'The function returned success: false' : `The function run ended ${run.status}`));
  const code =
    run.status === 'timed_out'
      ? 'TIMEOUT'
      : (run.error?.name ?? (reported !== undefined ? 'FunctionError' : 'FunctionFailed'));
  return { ok: false, error: { message, code } };
}

/**
 * The wait before attempt `attempt + 1` (attempts count from 1): `backoffMs`
 * before the second, doubling for each later one (`backoffMs × 2^(attempt−1)`),
 * never more than MAX_BACKOFF_MS. No jitter: both engines must compute the same.
 */
export function backoffBefore(policy: RetryPolicy, attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, policy.backoffMs * 2 ** Math.max(0, attempt - 1));
}

/** After attempt `attempt` of a compute step ended with `outcome`. */
export function afterCompute(step: ComputeStep, attempt: number, outcome: ComputeOutcome): Transition {
  if (outcome.ok) {
    const next =
      step.onSuccess && Object.hasOwn(step.onSuccess, 'nextStepId') ? step.onSuccess.nextStepId : step.nextStepId;
    return { kind: 'go', nextStepId: next ?? null };
  }
  const maxAttempts = step.retry?.maxAttempts ?? 1;
  if (attempt < maxAttempts) {
    return { kind: 'retry', attempt: attempt + 1, delayMs: backoffBefore(step.retry!, attempt) };
  }
  const reason = `Step ${step.id} failed after ${attempt} attempt${attempt === 1 ? '' : 's'}: ${outcome.error.message}`;
  return step.onFailure?.action === 'end' ? { kind: 'end', reason } : { kind: 'fail', reason };
}

/** A decision step: its result (the spec's shape) and where the run goes. */
export function afterDecision(step: DecisionStep, scope: RunScope): { result: DecisionResult; transition: Transition } {
  const result = evaluateDecision(step, scope);
  return { result, transition: { kind: 'go', nextStepId: result.selectedNextStepId } };
}

/** A delay step: the run waits `delayMs`, then goes on. */
export function afterDelay(step: DelayStep): Transition {
  return { kind: 'wait', delayMs: step.delayMs, nextStepId: step.nextStepId ?? null };
}

/** Before executing a step: a run that has executed MAX_EXECUTED_STEPS steps fails instead. */
export function beforeStep(executedSteps: number): Transition | undefined {
  return executedSteps >= MAX_EXECUTED_STEPS
    ? { kind: 'fail', reason: `The run executed ${MAX_EXECUTED_STEPS} steps, the most one run may` }
    : undefined;
}

/** The step with `id`, or undefined. */
export function stepById(steps: readonly Step[], id: string): Step | undefined {
  return steps.find((s) => s.id === id);
}
