import { describe, expect, it } from '@jest/globals';
import {
  afterCompute,
  afterDecision,
  afterDelay,
  backoffBefore,
  beforeStep,
  computeOutcomeOf,
  type ComputeOutcome,
} from './interpreter.js';
import { MAX_BACKOFF_MS, MAX_EXECUTED_STEPS, type ComputeStep } from './types.js';

const FN = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';
const ok: ComputeOutcome = { ok: true, output: 1 };
const bad: ComputeOutcome = { ok: false, error: { message: 'card declined', code: 'FunctionError' } };
const step = (extra: Partial<ComputeStep> = {}): ComputeStep => ({
  id: 'charge',
  type: 'compute',
  functionId: FN,
  ...extra,
});

describe('computeOutcomeOf', () => {
  it.each([
    [
      '{success: true, data} gives data',
      { status: 'succeeded', returnValue: { success: true, data: { id: 7 } } },
      { ok: true, output: { id: 7 } },
    ],
    ['any other return is the output', { status: 'succeeded', returnValue: [1, 2] }, { ok: true, output: [1, 2] }],
    ['no return is null', { status: 'succeeded', returnValue: undefined }, { ok: true, output: null }],
    [
      '{success: false, error} fails',
      {
        status: 'failed',
        returnValue: { success: false, error: 'card declined' },
        error: { name: 'FunctionError', message: 'card declined' },
      },
      { ok: false, error: { message: 'card declined', code: 'FunctionError' } },
    ],
    [
      'a throw fails with its message',
      { status: 'failed', returnValue: undefined, error: { name: 'TypeError', message: 'x is undefined' } },
      { ok: false, error: { message: 'x is undefined', code: 'TypeError' } },
    ],
    [
      'a timeout fails as TIMEOUT',
      { status: 'timed_out', returnValue: undefined, error: { name: 'TimeoutError', message: 'too long' } },
      { ok: false, error: { message: 'too long', code: 'TIMEOUT' } },
    ],
  ])('%s', (_name, run, expected) => {
    expect(computeOutcomeOf(run)).toEqual(expected);
  });
});

describe('afterCompute', () => {
  it.each([
    ['success goes to nextStepId', step({ nextStepId: 'ship' }), 1, ok, { kind: 'go', nextStepId: 'ship' }],
    [
      'onSuccess wins over nextStepId',
      step({ nextStepId: 'ship', onSuccess: { nextStepId: 'notify' } }),
      1,
      ok,
      { kind: 'go', nextStepId: 'notify' },
    ],
    [
      'onSuccess with null ends the run',
      step({ nextStepId: 'ship', onSuccess: { nextStepId: null } }),
      1,
      ok,
      { kind: 'go', nextStepId: null },
    ],
    ['no next step completes the run', step(), 1, ok, { kind: 'go', nextStepId: null }],
    [
      'a failure without retry fails the run',
      step(),
      1,
      bad,
      { kind: 'fail', reason: 'Step charge failed after 1 attempt: card declined' },
    ],
    [
      'onFailure end completes the run',
      step({ onFailure: { action: 'end' } }),
      1,
      bad,
      { kind: 'end', reason: 'Step charge failed after 1 attempt: card declined' },
    ],
    [
      'a failure with attempts left retries',
      step({ retry: { maxAttempts: 3, backoffMs: 100 } }),
      1,
      bad,
      { kind: 'retry', attempt: 2, delayMs: 100 },
    ],
    [
      'the backoff doubles',
      step({ retry: { maxAttempts: 3, backoffMs: 100 } }),
      2,
      bad,
      { kind: 'retry', attempt: 3, delayMs: 200 },
    ],
    [
      'the last attempt fails the run',
      step({ retry: { maxAttempts: 3, backoffMs: 100 } }),
      3,
      bad,
      { kind: 'fail', reason: 'Step charge failed after 3 attempts: card declined' },
    ],
  ])('%s', (_name, s, attempt, outcome, expected) => {
    expect(afterCompute(s, attempt, outcome)).toEqual(expected);
  });

  it('caps the backoff', () => {
    expect(backoffBefore({ maxAttempts: 20, backoffMs: 60_000 }, 19)).toBe(MAX_BACKOFF_MS);
    expect(backoffBefore({ maxAttempts: 2, backoffMs: 0 }, 1)).toBe(0);
  });
});

describe('decision, delay and the step limit', () => {
  it('a decision goes where its result says', () => {
    const { result, transition } = afterDecision(
      {
        id: 'd',
        type: 'decision',
        cases: [{ conditions: [{ path: 'input.vip', op: 'eq', value: true }], nextStepId: 'vip' }],
        defaultNextStepId: 'normal',
      },
      { input: { vip: false }, context: {}, steps: {} },
    );
    expect(result.selectedNextStepId).toBe('normal');
    expect(transition).toEqual({ kind: 'go', nextStepId: 'normal' });
  });

  it('a delay waits, then goes on', () => {
    expect(afterDelay({ id: 'w', type: 'delay', delayMs: 5000, nextStepId: 'next' })).toEqual({
      kind: 'wait',
      delayMs: 5000,
      nextStepId: 'next',
    });
    expect(afterDelay({ id: 'w', type: 'delay', delayMs: 5000 })).toEqual({
      kind: 'wait',
      delayMs: 5000,
      nextStepId: null,
    });
  });

  it('fails a run at the step limit', () => {
    expect(beforeStep(MAX_EXECUTED_STEPS - 1)).toBeUndefined();
    expect(beforeStep(MAX_EXECUTED_STEPS)).toMatchObject({ kind: 'fail' });
  });
});
