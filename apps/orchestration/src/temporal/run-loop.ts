import {
  afterCompute,
  afterDecision,
  beforeStep,
  DEFAULT_COMPUTE_TIMEOUT_MS,
  stepById,
  type ComputeOutcome,
  type DecisionResult,
  type JsonValue,
  type RunScope,
  type Step,
  type Transition,
} from '@strata/workflow';

/**
 * The loop of a run's Temporal workflow, apart from Temporal: it asks the pure
 * interpreter of `@strata/workflow` where the run goes and has its effects
 * recorded through `RunPorts` (activities in the workflow). Deterministic: it
 * imports nothing but the interpreter, so it is safe in the workflow sandbox,
 * and it can be driven outside a workflow (with the activities themselves) in
 * tests.
 */

/** Which run a workflow executes. */
export interface RunRef {
  readonly workspace: string;
  readonly orchestrationId: string;
  readonly runId: string;
}

/** Where a run stands when its workflow begins: a new run at its first step, a retried one at its failed step. */
export interface RunPlan {
  readonly steps: Step[];
  readonly stepId: string;
  readonly attempt: number;
  readonly scope: RunScope;
  /** How many steps the run has executed (each compute attempt counts). */
  readonly executed: number;
}

/**
 * One execution of a step: its id, the attempt, and `position`, the number of
 * steps the run had executed before it. Activities record a step only when the
 * run's count is still `position`, so an activity Temporal retries after it
 * committed records nothing twice.
 */
export interface StepAt {
  readonly stepId: string;
  readonly attempt: number;
  readonly position: number;
}

/** The effects of a run, each recorded on its rows. `false` or null: the run was closed (cancelled) meanwhile. */
export interface RunPorts {
  begin(ref: RunRef): Promise<RunPlan | null>;
  decision(ref: RunRef, at: StepAt, result: DecisionResult): Promise<boolean>;
  delayStarted(ref: RunRef, at: StepAt, delayMs: number): Promise<boolean>;
  delayEnded(ref: RunRef, at: StepAt): Promise<boolean>;
  /** Runs one attempt of a compute step and waits for its function run's outcome. */
  compute(ref: RunRef, at: StepAt, timeoutMs: number): Promise<ComputeOutcome | null>;
  finish(ref: RunRef, transition: Transition): Promise<void>;
  /** A durable timer in a workflow. */
  sleep(ms: number): Promise<void>;
}

/** How a workflow's run ended. */
export type RunEnd = 'completed' | 'failed' | 'closed';

/** Drives a run from where `begin` says it stands to its end. */
export async function driveRun(ref: RunRef, ports: RunPorts): Promise<RunEnd> {
  const plan = await ports.begin(ref);
  if (!plan) return 'closed';
  const outputs: Record<string, JsonValue> = { ...plan.scope.steps };
  const scope = (): RunScope => ({ input: plan.scope.input, context: plan.scope.context, steps: outputs });
  let stepId = plan.stepId;
  let attempt = plan.attempt;
  let position = plan.executed;
  for (;;) {
    const step = stepById(plan.steps, stepId);
    let t: Transition;
    if (!step) t = { kind: 'fail', reason: `Step ${stepId} does not exist` };
    else {
      const guard = beforeStep(position);
      if (guard) t = guard;
      else {
        const executed = await executeStep(ref, ports, step, { stepId, attempt, position }, scope(), outputs);
        if (executed === null) return 'closed';
        position++;
        t = executed;
      }
    }
    switch (t.kind) {
      case 'go':
        if (t.nextStepId === null) return finish(ref, ports, t);
        stepId = t.nextStepId;
        attempt = 1;
        break;
      case 'retry':
        await ports.sleep(t.delayMs);
        attempt = t.attempt;
        break;
      case 'wait':
        // Delays wait inside executeStep; a wait transition never reaches here.
        return finish(ref, ports, { kind: 'fail', reason: `Step ${stepId} left the run waiting` });
      case 'fail':
      case 'end':
        return finish(ref, ports, t);
    }
  }
}

/** Executes one step; null when the run was closed meanwhile. */
async function executeStep(
  ref: RunRef,
  ports: RunPorts,
  step: Step,
  at: StepAt,
  scope: RunScope,
  outputs: Record<string, JsonValue>,
): Promise<Transition | null> {
  if (step.type === 'decision') {
    const { result, transition } = afterDecision(step, scope);
    return (await ports.decision(ref, at, result)) ? transition : null;
  }
  if (step.type === 'delay') {
    if (!(await ports.delayStarted(ref, at, step.delayMs))) return null;
    await ports.sleep(step.delayMs);
    if (!(await ports.delayEnded(ref, at))) return null;
    return { kind: 'go', nextStepId: step.nextStepId ?? null };
  }
  const outcome = await ports.compute(ref, at, step.timeoutMs ?? DEFAULT_COMPUTE_TIMEOUT_MS);
  if (outcome === null) return null;
  if (outcome.ok) outputs[step.id] = outcome.output;
  return afterCompute(step, at.attempt, outcome);
}

async function finish(ref: RunRef, ports: RunPorts, t: Transition): Promise<RunEnd> {
  await ports.finish(ref, t);
  return t.kind === 'fail' ? 'failed' : 'completed';
}
