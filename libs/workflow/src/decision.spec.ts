import { describe, expect, it } from '@jest/globals';
import { evaluateCondition, evaluateDecision } from './decision.js';
import type { Condition, RunScope } from './types.js';

const scope: RunScope = {
  input: {
    amount: 120,
    currency: 'EUR',
    tags: ['vip', 'eu'],
    customer: { tier: 'gold', since: '2024-05-01' },
    nothing: null,
  },
  context: { threshold: 100, tiers: ['gold', 'platinum'] },
  steps: { score: { risk: 0.2, flags: [] } },
};

const c = (path: string, op: Condition['op'], extra: Partial<Condition> = {}): Condition => ({ path, op, ...extra });

describe('evaluateCondition', () => {
  it.each<[string, Condition, boolean]>([
    ['eq on a number', c('input.amount', 'eq', { value: 120 }), true],
    ['eq is strict about types', c('input.amount', 'eq', { value: '120' }), false],
    ['eq compares objects deeply', c('input.customer', 'eq', { value: { since: '2024-05-01', tier: 'gold' } }), true],
    ['eq on an array element', c('input.tags.0', 'eq', { value: 'vip' }), true],
    ['eq on null that is present', c('input.nothing', 'eq', { value: null }), true],
    ['neq', c('input.currency', 'neq', { value: 'USD' }), true],
    ['gt numbers', c('input.amount', 'gt', { value: 100 }), true],
    ['gte at the edge', c('input.amount', 'gte', { value: 120 }), true],
    ['lt numbers', c('input.amount', 'lt', { value: 120 }), false],
    ['lte at the edge', c('input.amount', 'lte', { value: 120 }), true],
    ['gt on ISO dates as strings', c('input.customer.since', 'gt', { value: '2024-01-01' }), true],
    ['in a list', c('input.customer.tier', 'in', { value: ['gold', 'silver'] }), true],
    ['notIn a list', c('input.currency', 'notIn', { value: ['USD', 'GBP'] }), true],
    ['exists on a present null', c('input.nothing', 'exists'), true],
    ['exists on a missing path', c('input.missing', 'exists'), false],
    ['notExists on a missing path', c('input.missing.deeper', 'notExists'), true],
    ['a step output', c('steps.score.output.risk', 'lt', { value: 0.5 }), true],
    ['an empty list in a step output', c('steps.score.output.flags', 'eq', { value: [] }), true],
    ['valuePath from context', c('input.amount', 'gt', { valuePath: 'context.threshold' }), true],
    ['valuePath to a list', c('input.customer.tier', 'in', { valuePath: 'context.tiers' }), true],
  ])('%s', (_name, condition, matched) => {
    expect(evaluateCondition(condition, scope).matched).toBe(matched);
  });

  it('reports everything the spec names for a condition', () => {
    expect(evaluateCondition(c('input.amount', 'gt', { valuePath: 'context.threshold' }), scope)).toEqual({
      path: 'input.amount',
      operator: 'gt',
      expectedValue: 100,
      valuePath: 'context.threshold',
      actualValue: 120,
      pathExists: true,
      matched: true,
      error: null,
    });
  });

  it.each<[string, Condition, string]>([
    ['a missing path (neq too)', c('input.missing', 'neq', { value: 1 }), 'path input.missing does not exist'],
    ['a missing path with notIn', c('input.missing', 'notIn', { value: [1] }), 'does not exist'],
    ['a number against a string', c('input.amount', 'gt', { value: '100' }), 'not a number and a string'],
    ['an object against a number', c('input.customer', 'lt', { value: 3 }), 'not an object and a number'],
    ['in without a list', c('input.currency', 'in', { valuePath: 'context.threshold' }), 'needs an array'],
    [
      'a missing valuePath',
      c('input.amount', 'eq', { valuePath: 'context.nope' }),
      'valuePath context.nope does not exist',
    ],
    ['an index past the end', c('input.tags.5', 'eq', { value: 'x' }), 'does not exist'],
    ['a step that has not run', c('steps.later.output.x', 'eq', { value: 1 }), 'does not exist'],
  ])('does not match %s, and says why', (_name, condition, why) => {
    const e = evaluateCondition(condition, scope);
    expect(e.matched).toBe(false);
    expect(e.error).toContain(why);
  });

  it('reads own properties only', () => {
    expect(evaluateCondition(c('input.constructor', 'exists'), scope).matched).toBe(false);
    expect(evaluateCondition(c('input.amount.toFixed', 'exists'), scope).matched).toBe(false);
  });
});

describe('evaluateDecision', () => {
  const step = {
    cases: [
      { conditions: [c('input.amount', 'gt', { value: 1000 })], nextStepId: 'review' },
      {
        conditions: [c('input.customer.tier', 'eq', { value: 'gold' }), c('input.currency', 'eq', { value: 'EUR' })],
        nextStepId: 'fast-track',
      },
      { conditions: [c('input.amount', 'gt', { value: 0 })], nextStepId: 'never-evaluated' },
    ],
    defaultNextStepId: 'standard',
  };

  it('takes the first case whose conditions all match and evaluates no further', () => {
    const result = evaluateDecision(step, scope);
    expect(result).toMatchObject({ evaluatedCases: 2, matchedCaseIndex: 1, selectedNextStepId: 'fast-track' });
    expect(result.evaluations.map((e) => [e.caseIndex, e.nextStepId, e.matched])).toEqual([
      [0, 'review', false],
      [1, 'fast-track', true],
    ]);
    expect(result.evaluations[1]!.conditions).toHaveLength(2);
  });

  it('falls back to defaultNextStepId, and to the end of the run without one', () => {
    const poor: RunScope = { ...scope, input: { amount: -5 } };
    expect(evaluateDecision(step, poor)).toMatchObject({
      evaluatedCases: 3,
      matchedCaseIndex: -1,
      selectedNextStepId: 'standard',
    });
    expect(evaluateDecision({ cases: step.cases }, poor).selectedNextStepId).toBeNull();
  });

  it('does not match a case with one failing condition, even if the others match', () => {
    const eur: RunScope = { ...scope, input: { ...(scope.input as object), currency: 'USD' } };
    expect(evaluateDecision(step, eur).matchedCaseIndex).toBe(2);
  });
});
