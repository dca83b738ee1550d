import { describe, expect, it } from '@jest/globals';
import { computeStepFunctionIds, validateSteps } from './validate-steps.js';

const FN = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';
const problems = (steps: unknown) => {
  const checked = validateSteps(steps);
  return 'errors' in checked ? checked.errors : [];
};
const fields = (steps: unknown) => problems(steps).map((p) => p.field);

describe('validateSteps', () => {
  it('accepts compute, decision and delay steps and answers them typed', () => {
    const checked = validateSteps([
      { id: 'charge', type: 'compute', functionId: FN, retry: { maxAttempts: 3, backoffMs: 500 }, nextStepId: 'route' },
      {
        id: 'route',
        type: 'decision',
        cases: [{ conditions: [{ path: 'steps.charge.output.ok', op: 'eq', value: true }], nextStepId: 'wait' }],
        defaultNextStepId: null,
      },
      { id: 'wait', type: 'delay', delayMs: 1000 },
    ]);
    expect('steps' in checked && checked.steps.map((s) => s.type)).toEqual(['compute', 'decision', 'delay']);
  });

  it.each<[string, unknown, string[]]>([
    ['no steps', [], ['steps']],
    ['not a list', { id: 'a' }, ['steps']],
    [
      'a repeated id',
      [
        { id: 'a', type: 'delay', delayMs: 1, nextStepId: 'a2' },
        { id: 'a2', type: 'delay', delayMs: 1 },
        { id: 'a', type: 'delay', delayMs: 1 },
      ],
      ['steps[2].id'],
    ],
    ['a missing id', [{ type: 'delay', delayMs: 1 }], ['steps[0].id']],
    ['an unknown type', [{ id: 'a', type: 'wait' }], ['steps[0].type']],
    ['an unknown key', [{ id: 'a', type: 'delay', delayMs: 1, functionId: FN }], ['steps[0].functionId']],
    ['a compute step without a function', [{ id: 'a', type: 'compute' }], ['steps[0].functionId']],
    ['a timeout too short', [{ id: 'a', type: 'compute', functionId: FN, timeoutMs: 5 }], ['steps[0].timeoutMs']],
    [
      'a retry without attempts',
      [{ id: 'a', type: 'compute', functionId: FN, retry: { backoffMs: 5 } }],
      ['steps[0].retry.maxAttempts'],
    ],
    [
      'a bad failure action',
      [{ id: 'a', type: 'compute', functionId: FN, onFailure: { action: 'retry' } }],
      ['steps[0].onFailure.action'],
    ],
    ['a delay without delayMs', [{ id: 'a', type: 'delay' }], ['steps[0].delayMs']],
    [
      'a next step that does not exist',
      [{ id: 'a', type: 'delay', delayMs: 1, nextStepId: 'b' }],
      ['steps[0].nextStepId'],
    ],
    [
      'an onSuccess target that does not exist',
      [{ id: 'a', type: 'compute', functionId: FN, onSuccess: { nextStepId: 'x' } }],
      ['steps[0].onSuccess.nextStepId'],
    ],
    [
      'a default that does not exist',
      [{ id: 'a', type: 'decision', cases: [], defaultNextStepId: 'x' }],
      ['steps[0].defaultNextStepId'],
    ],
    ['a decision without cases', [{ id: 'a', type: 'decision' }], ['steps[0].cases']],
    [
      'a case without conditions',
      [{ id: 'a', type: 'decision', cases: [{ conditions: [], nextStepId: 'a' }] }],
      ['steps[0].cases[0].conditions'],
    ],
    [
      'a case without a target',
      [{ id: 'a', type: 'decision', cases: [{ conditions: [{ path: 'input.x', op: 'exists' }] }] }],
      ['steps[0].cases[0].nextStepId'],
    ],
  ])('refuses %s', (_name, steps, expected) => {
    expect(fields(steps)).toEqual(expected);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['an unknown operator', { path: 'input.x', op: 'like', value: 1 }, 'op'],
    ['a path outside the roots', { path: 'record.x', op: 'eq', value: 1 }, 'path'],
    ['a path with an empty segment', { path: 'input..x', op: 'eq', value: 1 }, 'path'],
    ['a steps path without output', { path: 'steps.a.result', op: 'eq', value: 1 }, 'path'],
    ['a steps path to an unknown step', { path: 'steps.ghost.output.x', op: 'eq', value: 1 }, 'path'],
    ['in without a list', { path: 'input.x', op: 'in', value: 'a' }, 'value'],
    ['exists with a value', { path: 'input.x', op: 'exists', value: 1 }, 'value'],
    ['eq with nothing to compare', { path: 'input.x', op: 'eq' }, 'value'],
    ['both value and valuePath', { path: 'input.x', op: 'eq', value: 1, valuePath: 'context.y' }, 'valuePath'],
    ['a bad valuePath', { path: 'input.x', op: 'eq', valuePath: 'nowhere' }, 'valuePath'],
    ['an unknown key', { path: 'input.x', op: 'eq', value: 1, operator: 'eq' }, 'operator'],
  ])('refuses a condition with %s', (_name, condition, field) => {
    const steps = [
      { id: 'a', type: 'decision', cases: [{ conditions: [condition], nextStepId: 'a2' }] },
      { id: 'a2', type: 'delay', delayMs: 1 },
    ];
    expect(fields(steps)).toEqual([`steps[0].cases[0].conditions[0].${field}`]);
  });

  it('reports every problem at once', () => {
    expect(fields([{ id: 'a', type: 'compute', timeoutMs: 1, onFailure: { action: 'x' }, extra: 1 }])).toEqual([
      'steps[0].extra',
      'steps[0].functionId',
      'steps[0].timeoutMs',
      'steps[0].onFailure.action',
    ]);
  });

  it('refuses steps the first one cannot reach', () => {
    expect(
      problems([
        { id: 'a', type: 'delay', delayMs: 1 },
        { id: 'orphan', type: 'delay', delayMs: 1 },
      ]),
    ).toEqual([{ field: 'steps[1]', message: 'is not reachable from the first step (a)' }]);
  });

  it('refuses a cycle without a delay step, and accepts one through a delay step', () => {
    const loop = (withDelay: boolean) => [
      { id: 'poll', type: 'compute', functionId: FN, nextStepId: 'check' },
      {
        id: 'check',
        type: 'decision',
        cases: [
          {
            conditions: [{ path: 'steps.poll.output.done', op: 'neq', value: true }],
            nextStepId: withDelay ? 'pause' : 'poll',
          },
        ],
      },
      { id: 'pause', type: 'delay', delayMs: 5000, nextStepId: 'poll' },
    ];
    expect(problems(loop(false))).toEqual([
      { field: 'steps[2]', message: 'is not reachable from the first step (poll)' },
      { field: 'steps[0]', message: 'is on a cycle without a delay step: poll → check → poll' },
    ]);
    expect(validateSteps(loop(true))).toHaveProperty('steps');
    expect(problems([{ id: 'self', type: 'compute', functionId: FN, nextStepId: 'self' }])).toEqual([
      { field: 'steps[0]', message: 'is on a cycle without a delay step: self → self' },
    ]);
  });

  it('says "must be" of a value given wrong and "is required" of one left out', () => {
    expect(
      problems([
        { id: 'a', type: 'delay', delayMs: 0, nextStepId: 'b' },
        { id: 'b', type: 'delay', nextStepId: 'c' },
        { id: 'c', type: 'compute', functionId: 42, nextStepId: 'd' },
        { id: 'd', type: 'compute', retry: { maxAttempts: 0 }, functionId: FN, nextStepId: 'e' },
        { id: 'e', type: 'decision', cases: 'all' },
        { id: 7, type: 'delay', delayMs: 1 },
      ]),
    ).toEqual([
      { field: 'steps[0].delayMs', message: 'must be whole milliseconds from 1 to 2592000000 (30 days)' },
      { field: 'steps[1].delayMs', message: 'is required: whole milliseconds from 1 to 2592000000 (30 days)' },
      { field: 'steps[2].functionId', message: 'must be the UUID of a function' },
      { field: 'steps[3].retry.maxAttempts', message: 'must be 1 to 20 attempts in all' },
      { field: 'steps[4].cases', message: 'must be a list of {conditions, nextStepId}' },
      { field: 'steps[5].id', message: 'must be 1 to 100 letters, digits, hyphens and underscores' },
    ]);
  });

  it('keeps a function id in lower case, and finds the well-formed ones of steps with problems', () => {
    const upper = FN.toUpperCase();
    const checked = validateSteps([{ id: 'a', type: 'compute', functionId: upper }]);
    expect(checked).toEqual({ steps: [expect.objectContaining({ functionId: FN })] });
    expect(
      computeStepFunctionIds([
        { id: 'a', type: 'compute', functionId: upper, timeoutMs: 1 },
        { id: 'b', type: 'compute', functionId: 'abc' },
        { id: 'c', type: 'delay', functionId: FN },
        'not a step',
        { id: 'd', type: 'compute', functionId: FN },
      ]),
    ).toEqual([
      { index: 0, functionId: FN },
      { index: 4, functionId: FN },
    ]);
    expect(computeStepFunctionIds({ not: 'a list' })).toEqual([]);
    const tooMany = Array.from({ length: 101 }, (_, i) => ({ id: `s${i}`, type: 'compute', functionId: FN }));
    expect(computeStepFunctionIds(tooMany)).toEqual([]);
    expect(computeStepFunctionIds(tooMany.slice(0, 100))).toHaveLength(100);
  });
});
