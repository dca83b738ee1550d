import { readPath } from './paths.js';
import type { Condition, ConditionOperator, DecisionStep, JsonValue, RunScope } from './types.js';

/** One condition's evaluation, in the spec's shape. */
export interface ConditionEvaluation {
  path: string;
  operator: ConditionOperator;
  expectedValue: JsonValue | null;
  valuePath: string | null;
  actualValue: JsonValue | null;
  pathExists: boolean;
  matched: boolean;
  error: string | null;
}

export interface CaseEvaluation {
  caseIndex: number;
  nextStepId: string;
  matched: boolean;
  conditions: ConditionEvaluation[];
}

/** A decision's result, in the spec's shape. `matchedCaseIndex` is -1 when no case matched. */
export interface DecisionResult {
  evaluatedCases: number;
  matchedCaseIndex: number;
  selectedNextStepId: string | null;
  evaluations: CaseEvaluation[];
}

/**
 * Evaluates a decision step's cases in order; the first whose conditions all
 * match selects its `nextStepId`, else `defaultNextStepId` (null ends the run).
 * Cases after the match are not evaluated (`evaluatedCases` counts those that
 * were). Within a case every condition is evaluated, so the result shows them all.
 */
export function evaluateDecision(
  step: Pick<DecisionStep, 'cases' | 'defaultNextStepId'>,
  scope: RunScope,
): DecisionResult {
  const evaluations: CaseEvaluation[] = [];
  for (const [caseIndex, c] of step.cases.entries()) {
    const conditions = c.conditions.map((condition) => evaluateCondition(condition, scope));
    const matched = conditions.length > 0 && conditions.every((e) => e.matched);
    evaluations.push({ caseIndex, nextStepId: c.nextStepId, matched, conditions });
    if (matched) {
      return {
        evaluatedCases: evaluations.length,
        matchedCaseIndex: caseIndex,
        selectedNextStepId: c.nextStepId,
        evaluations,
      };
    }
  }
  return {
    evaluatedCases: evaluations.length,
    matchedCaseIndex: -1,
    selectedNextStepId: step.defaultNextStepId ?? null,
    evaluations,
  };
}

/**
 * One condition. A path that does not exist matches only `notExists`; every
 * other operator answers false for it (`neq` and `notIn` included: nothing is
 * compared with a missing value). `gt`, `gte`, `lt` and `lte` compare two
 * numbers, or two strings (code-unit order, which orders ISO 8601 times); any
 * other pair does not match and says why in `error`. `eq` and `neq` compare
 * JSON values deeply. `in` and `notIn` need an array.
 */
export function evaluateCondition(condition: Condition, scope: RunScope): ConditionEvaluation {
  const actual = readPath(scope, condition.path);
  let expected: JsonValue | undefined = condition.value;
  let error: string | null = null;
  if (condition.valuePath !== undefined) {
    const other = readPath(scope, condition.valuePath);
    expected = other.value;
    if (!other.exists) error = `valuePath ${condition.valuePath} does not exist`;
  }
  const result = (matched: boolean, why: string | null = error): ConditionEvaluation => ({
    path: condition.path,
    operator: condition.op,
    expectedValue: expected ?? null,
    valuePath: condition.valuePath ?? null,
    actualValue: actual.exists ? (actual.value ?? null) : null,
    pathExists: actual.exists,
    matched,
    error: why,
  });
  if (condition.op === 'exists') return result(actual.exists, null);
  if (condition.op === 'notExists') return result(!actual.exists, null);
  if (!actual.exists) return result(false, error ?? `path ${condition.path} does not exist`);
  if (error) return result(false);
  const value = actual.value as JsonValue;
  switch (condition.op) {
    case 'eq':
      return result(deepEqual(value, expected ?? null));
    case 'neq':
      return result(!deepEqual(value, expected ?? null));
    case 'in':
    case 'notIn': {
      if (!Array.isArray(expected)) return result(false, `${condition.op} needs an array to compare with`);
      const found = expected.some((item) => deepEqual(item, value));
      return result(condition.op === 'in' ? found : !found);
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const order = compare(value, expected ?? null);
      if (order === undefined) {
        return result(
          false,
          `${condition.op} compares two numbers or two strings, not ${kindOf(value)} and ${kindOf(expected ?? null)}`,
        );
      }
      const matched =
        condition.op === 'gt'
          ? order > 0
          : condition.op === 'gte'
            ? order >= 0
            : condition.op === 'lt'
              ? order < 0
              : order <= 0;
      return result(matched);
    }
  }
}

function compare(a: JsonValue, b: JsonValue): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a === b ? 0 : a < b ? -1 : 1;
  if (typeof a === 'string' && typeof b === 'string') return a === b ? 0 : a < b ? -1 : 1;
  return undefined;
}

function kindOf(v: JsonValue): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

export function deepEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]!));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every(
    (k) => Object.hasOwn(b, k) && deepEqual((a as Record<string, JsonValue>)[k]!, (b as Record<string, JsonValue>)[k]!),
  );
}
