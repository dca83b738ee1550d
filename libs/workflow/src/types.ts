/** Only JSON flows through a run: inputs, context, step outputs. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export const STEP_TYPES = ['compute', 'decision', 'delay'] as const;
export type StepType = (typeof STEP_TYPES)[number];

export const CONDITION_OPERATORS = [
  'eq',
  'neq',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'notIn',
  'exists',
  'notExists',
] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

export const FAILURE_ACTIONS = ['fail', 'end'] as const;
export type FailureAction = (typeof FAILURE_ACTIONS)[number];

/** A decision condition: `path` compared by `op` with `value`, or with the value at `valuePath`. */
export interface Condition {
  readonly path: string;
  readonly op: ConditionOperator;
  readonly value?: JsonValue;
  readonly valuePath?: string;
}

export interface DecisionCase {
  readonly conditions: readonly Condition[];
  readonly nextStepId: string;
}

export interface RetryPolicy {
  /** Attempts in all, the first included (1: no retry). */
  readonly maxAttempts: number;
  /** The wait before the second attempt; it doubles for each later one (docs: "Retries"). */
  readonly backoffMs: number;
}

interface StepBase {
  readonly id: string;
  readonly name?: string;
  /** The next step; omitted or null ends the run. */
  readonly nextStepId?: string | null;
}

export interface ComputeStep extends StepBase {
  readonly type: 'compute';
  readonly functionId: string;
  /** Default DEFAULT_COMPUTE_TIMEOUT_MS. */
  readonly timeoutMs?: number;
  readonly retry?: RetryPolicy;
  /** Takes precedence over `nextStepId` when the step succeeds. */
  readonly onSuccess?: { readonly nextStepId?: string | null };
  /** `fail` (default) fails the run; `end` completes it. */
  readonly onFailure?: { readonly action: FailureAction };
}

export interface DecisionStep extends StepBase {
  readonly type: 'decision';
  readonly cases: readonly DecisionCase[];
  readonly defaultNextStepId?: string | null;
}

export interface DelayStep extends StepBase {
  readonly type: 'delay';
  readonly delayMs: number;
}

export type Step = ComputeStep | DecisionStep | DelayStep;

/** What paths read: the run's input, its shared context, and the outputs of earlier steps. */
export interface RunScope {
  readonly input: JsonValue;
  readonly context: JsonValue;
  /** Step id → that step's output. */
  readonly steps: Readonly<Record<string, JsonValue>>;
}

export const DEFAULT_COMPUTE_TIMEOUT_MS = 300_000;
/** Steps one run may execute, cycles through delay steps included: past it the run fails. */
export const MAX_EXECUTED_STEPS = 1000;
/** The longest wait between two attempts, whatever the doubling reaches. */
export const MAX_BACKOFF_MS = 3_600_000;
