import { parsePath } from './paths.js';
import { requirement } from './requirement.js';
import {
  CONDITION_OPERATORS,
  FAILURE_ACTIONS,
  STEP_TYPES,
  type Condition,
  type ConditionOperator,
  type DecisionCase,
  type JsonValue,
  type Step,
} from './types.js';

export interface StepProblem {
  readonly field: string;
  readonly message: string;
}

export const MAX_STEPS = 100;
export const MAX_DELAY_MS = 30 * 24 * 3600 * 1000;
export const MAX_TIMEOUT_MS = 3_600_000;
export const MAX_ATTEMPTS = 20;
const STEP_ID = /^[A-Za-z0-9_-]{1,100}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const KEYS: Record<Step['type'], readonly string[]> = {
  compute: ['id', 'name', 'type', 'nextStepId', 'functionId', 'timeoutMs', 'retry', 'onSuccess', 'onFailure'],
  decision: ['id', 'name', 'type', 'nextStepId', 'cases', 'defaultNextStepId'],
  delay: ['id', 'name', 'type', 'nextStepId', 'delayMs'],
};

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const own = (o: Obj, k: string): unknown => (Object.hasOwn(o, k) ? o[k] : undefined);
const isInt = (v: unknown, min: number, max: number): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/**
 * Checks an orchestration's steps and answers them typed, or every problem at
 * once, one entry per problem (`steps[2].cases[0].conditions[1].op`):
 *
 * - ids are unique (letters, digits, `-`, `_`; at most 100 characters);
 * - every `nextStepId`, `onSuccess.nextStepId`, `defaultNextStepId` and case target exists;
 * - each type has its own fields, well formed; unknown keys are refused;
 * - every step is reachable from the first one;
 * - a cycle is refused unless a delay step lies on it (and a run stops at
 *   MAX_EXECUTED_STEPS executed steps whatever it loops through);
 * - conditions have a known operator and paths rooted at `input.`, `context.` or
 *   `steps.<id>.output` of a step that exists; `in`/`notIn` take an array,
 *   `exists`/`notExists` no value, the others a `value` or a `valuePath`.
 *
 * That each `functionId` names a function of the workspace is the caller's check (it needs I/O).
 */
export function validateSteps(raw: unknown): { steps: Step[] } | { errors: StepProblem[] } {
  const problems: StepProblem[] = [];
  const add = (field: string, message: string) => problems.push({ field, message });
  if (!Array.isArray(raw) || raw.length === 0) {
    return { errors: [{ field: 'steps', message: 'must be a non-empty list of steps' }] };
  }
  if (raw.length > MAX_STEPS) return { errors: [{ field: 'steps', message: `must hold at most ${MAX_STEPS} steps` }] };

  const ids = new Map<string, number>();
  raw.forEach((s, i) => {
    const id = isObject(s) ? own(s, 'id') : undefined;
    if (typeof id === 'string' && STEP_ID.test(id)) {
      if (ids.has(id)) add(`steps[${i}].id`, `repeats the id of steps[${ids.get(id)}]`);
      else ids.set(id, i);
    }
  });
  const target = (value: unknown, field: string, required = false): string | null | undefined => {
    if (value === undefined || value === null) {
      if (required) add(field, 'is required: the id of a step');
      return value === null ? null : undefined;
    }
    if (typeof value !== 'string' || !ids.has(value)) {
      add(field, 'must be the id of a step of this orchestration');
      return undefined;
    }
    return value;
  };

  const steps: Step[] = [];
  raw.forEach((s, i) => {
    const at = `steps[${i}]`;
    if (!isObject(s)) {
      add(at, 'must be a step object {id, type, ...}');
      return;
    }
    const id = own(s, 'id');
    if (typeof id !== 'string' || !STEP_ID.test(id)) {
      add(`${at}.id`, requirement(id, '1 to 100 letters, digits, hyphens and underscores'));
    }
    const type = own(s, 'type');
    if (!(STEP_TYPES as readonly unknown[]).includes(type)) {
      add(`${at}.type`, `must be one of ${STEP_TYPES.join(', ')}`);
      return;
    }
    const kind = type as Step['type'];
    for (const key of Object.keys(s)) {
      if (!KEYS[kind].includes(key)) add(`${at}.${key}`, `is not a field of a ${kind} step`);
    }
    const name = own(s, 'name');
    if (name !== undefined && (typeof name !== 'string' || name.length > 200)) {
      add(`${at}.name`, 'must be a string of at most 200 characters');
    }
    const nextStepId = target(own(s, 'nextStepId'), `${at}.nextStepId`);
    const base = {
      id: typeof id === 'string' ? id : '',
      ...(typeof name === 'string' ? { name } : {}),
      ...(nextStepId !== undefined ? { nextStepId } : {}),
    };
    if (kind === 'compute') steps.push({ ...base, type: 'compute', ...computeFields(s, at, add, target) });
    else if (kind === 'delay') {
      const delayMs = own(s, 'delayMs');
      if (!isInt(delayMs, 1, MAX_DELAY_MS))
        add(`${at}.delayMs`, requirement(delayMs, `whole milliseconds from 1 to ${MAX_DELAY_MS} (30 days)`));
      steps.push({ ...base, type: 'delay', delayMs: isInt(delayMs, 1, MAX_DELAY_MS) ? delayMs : 1 });
    } else {
      const cases = decisionCases(own(s, 'cases'), at, add, target, new Set(ids.keys()));
      const fallback = target(own(s, 'defaultNextStepId'), `${at}.defaultNextStepId`);
      steps.push({
        ...base,
        type: 'decision',
        cases,
        ...(fallback !== undefined ? { defaultNextStepId: fallback } : {}),
      });
    }
  });
  if (problems.length > 0) return { errors: problems };
  checkGraph(steps, add);
  return problems.length > 0 ? { errors: problems } : { steps };
}

/**
 * The function ids of the well-formed compute steps of `raw` steps (lower
 * case), by index: what the caller looks up, also when other parts of the
 * steps have problems, so that an unknown function is reported with them.
 * None for more than MAX_STEPS steps (at most 100 ids go to compute).
 */
export function computeStepFunctionIds(raw: unknown): { index: number; functionId: string }[] {
  // More steps than an orchestration may have is the one problem reported: nothing is looked up.
  if (!Array.isArray(raw) || raw.length > MAX_STEPS) return [];
  return raw.flatMap((s: unknown, index) => {
    if (!isObject(s) || own(s, 'type') !== 'compute') return [];
    const functionId = own(s, 'functionId');
    return typeof functionId === 'string' && UUID.test(functionId)
      ? [{ index, functionId: functionId.toLowerCase() }]
      : [];
  });
}

type Add = (field: string, message: string) => void;
type Target = (value: unknown, field: string, required?: boolean) => string | null | undefined;

function computeFields(s: Obj, at: string, add: Add, target: Target) {
  const functionId = own(s, 'functionId');
  if (typeof functionId !== 'string' || !UUID.test(functionId))
    add(`${at}.functionId`, requirement(functionId, 'the UUID of a function'));
  const timeoutMs = own(s, 'timeoutMs');
  if (timeoutMs !== undefined && !isInt(timeoutMs, 1000, MAX_TIMEOUT_MS)) {
    add(`${at}.timeoutMs`, `must be whole milliseconds from 1000 to ${MAX_TIMEOUT_MS}`);
  }
  const retry = own(s, 'retry');
  let policy: { maxAttempts: number; backoffMs: number } | undefined;
  if (retry !== undefined) {
    if (!isObject(retry)) add(`${at}.retry`, 'must be {maxAttempts, backoffMs}');
    else {
      for (const key of Object.keys(retry)) {
        if (key !== 'maxAttempts' && key !== 'backoffMs') add(`${at}.retry.${key}`, 'is not a field of retry');
      }
      const maxAttempts = own(retry, 'maxAttempts');
      const backoffMs = own(retry, 'backoffMs') ?? 1000;
      if (!isInt(maxAttempts, 1, MAX_ATTEMPTS))
        add(`${at}.retry.maxAttempts`, requirement(maxAttempts, `1 to ${MAX_ATTEMPTS} attempts in all`));
      if (!isInt(backoffMs, 0, 3_600_000)) add(`${at}.retry.backoffMs`, 'must be whole milliseconds from 0 to 3600000');
      if (isInt(maxAttempts, 1, MAX_ATTEMPTS) && isInt(backoffMs, 0, 3_600_000)) policy = { maxAttempts, backoffMs };
    }
  }
  const onSuccess = own(s, 'onSuccess');
  let successNext: string | null | undefined;
  if (onSuccess !== undefined) {
    if (!isObject(onSuccess)) add(`${at}.onSuccess`, 'must be {nextStepId}');
    else successNext = target(own(onSuccess, 'nextStepId'), `${at}.onSuccess.nextStepId`);
  }
  const onFailure = own(s, 'onFailure');
  let action: 'fail' | 'end' | undefined;
  if (onFailure !== undefined) {
    const given = isObject(onFailure) ? own(onFailure, 'action') : undefined;
    if (!(FAILURE_ACTIONS as readonly unknown[]).includes(given)) {
      add(`${at}.onFailure.action`, `must be one of ${FAILURE_ACTIONS.join(', ')}`);
    } else action = given as 'fail' | 'end';
  }
  return {
    // Compute answers ids in lower case; an id given in upper case names the same function.
    functionId: typeof functionId === 'string' ? functionId.toLowerCase() : '',
    ...(typeof timeoutMs === 'number' ? { timeoutMs } : {}),
    ...(policy ? { retry: policy } : {}),
    ...(onSuccess !== undefined ? { onSuccess: successNext === undefined ? {} : { nextStepId: successNext } } : {}),
    ...(action ? { onFailure: { action } } : {}),
  };
}

function decisionCases(raw: unknown, at: string, add: Add, target: Target, ids: Set<string>): DecisionCase[] {
  if (!Array.isArray(raw)) {
    add(`${at}.cases`, requirement(raw, 'a list of {conditions, nextStepId}'));
    return [];
  }
  return raw.map((c, j): DecisionCase => {
    const cat = `${at}.cases[${j}]`;
    if (!isObject(c)) {
      add(cat, 'must be {conditions, nextStepId}');
      return { conditions: [], nextStepId: '' };
    }
    for (const key of Object.keys(c))
      if (key !== 'conditions' && key !== 'nextStepId') add(`${cat}.${key}`, 'is not a field of a case');
    const next = target(own(c, 'nextStepId'), `${cat}.nextStepId`, true);
    const conditions = own(c, 'conditions');
    if (!Array.isArray(conditions) || conditions.length === 0) {
      add(`${cat}.conditions`, requirement(conditions, 'a non-empty list of conditions'));
      return { conditions: [], nextStepId: next ?? '' };
    }
    return {
      conditions: conditions.map((k, n) => condition(k, `${cat}.conditions[${n}]`, add, ids)),
      nextStepId: next ?? '',
    };
  });
}

function condition(raw: unknown, at: string, add: Add, ids: Set<string>): Condition {
  if (!isObject(raw)) {
    add(at, 'must be {path, op, value?, valuePath?}');
    return { path: '', op: 'exists' };
  }
  for (const key of Object.keys(raw)) {
    if (!['path', 'op', 'value', 'valuePath'].includes(key)) add(`${at}.${key}`, 'is not a field of a condition');
  }
  const checkPath = (value: unknown, field: string): string | undefined => {
    const parsed = parsePath(value);
    if ('error' in parsed) add(field, parsed.error);
    else if (parsed.root.kind === 'step' && !ids.has(parsed.root.stepId)) {
      add(field, `reads the output of ${parsed.root.stepId}, which is not a step of this orchestration`);
    } else return value as string;
    return undefined;
  };
  const path = checkPath(own(raw, 'path'), `${at}.path`);
  const op = own(raw, 'op');
  if (!(CONDITION_OPERATORS as readonly unknown[]).includes(op)) {
    add(`${at}.op`, `must be one of ${CONDITION_OPERATORS.join(', ')}`);
    return { path: path ?? '', op: 'exists' };
  }
  const operator = op as ConditionOperator;
  const hasValue = Object.hasOwn(raw, 'value');
  const rawValuePath = own(raw, 'valuePath');
  const valuePath = rawValuePath === undefined ? undefined : checkPath(rawValuePath, `${at}.valuePath`);
  if (operator === 'exists' || operator === 'notExists') {
    if (hasValue || rawValuePath !== undefined) add(`${at}.value`, `${operator} takes no value nor valuePath`);
    return { path: path ?? '', op: operator };
  }
  if (hasValue && rawValuePath !== undefined) add(`${at}.valuePath`, 'give value or valuePath, not both');
  else if (!hasValue && rawValuePath === undefined) add(`${at}.value`, `${operator} needs a value or a valuePath`);
  const value = own(raw, 'value') as JsonValue | undefined;
  if (hasValue && (operator === 'in' || operator === 'notIn') && !Array.isArray(value)) {
    add(`${at}.value`, `${operator} takes a list of values`);
  }
  return {
    path: path ?? '',
    op: operator,
    ...(hasValue ? { value: value ?? null } : {}),
    ...(valuePath !== undefined ? { valuePath } : {}),
  };
}

/** Every step reachable from the first; no cycle without a delay step on it. */
function checkGraph(steps: Step[], add: Add): void {
  const index = new Map(steps.map((s, i) => [s.id, i]));
  const edges = (s: Step): string[] => {
    const out: (string | null | undefined)[] = [s.nextStepId];
    if (s.type === 'compute') out.push(s.onSuccess?.nextStepId);
    if (s.type === 'decision') out.push(s.defaultNextStepId, ...s.cases.map((c) => c.nextStepId));
    return out.filter((t): t is string => typeof t === 'string' && index.has(t));
  };
  const seen = new Set<string>([steps[0]!.id]);
  const queue = [steps[0]!];
  while (queue.length > 0) {
    for (const next of edges(queue.shift()!)) {
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(steps[index.get(next)!]!);
      }
    }
  }
  steps.forEach((s, i) => {
    if (!seen.has(s.id)) add(`steps[${i}]`, `is not reachable from the first step (${steps[0]!.id})`);
  });
  // A cycle with no delay step on it is a cycle of the graph without the delay steps.
  const state = new Map<string, 'open' | 'done'>();
  const reported = new Set<string>();
  const visit = (s: Step, path: string[]): void => {
    state.set(s.id, 'open');
    for (const next of edges(s)) {
      const step = steps[index.get(next)!]!;
      if (step.type === 'delay') continue;
      if (state.get(next) === 'open') {
        const cycle = [...path.slice(path.indexOf(next)), next];
        const key = [...new Set(cycle)].sort().join(',');
        if (!reported.has(key)) {
          reported.add(key);
          add(`steps[${index.get(next)}]`, `is on a cycle without a delay step: ${cycle.join(' → ')}`);
        }
      } else if (!state.has(next)) visit(step, [...path, next]);
    }
    state.set(s.id, 'done');
  };
  for (const s of steps) if (s.type !== 'delay' && !state.has(s.id)) visit(s, [s.id]);
}
