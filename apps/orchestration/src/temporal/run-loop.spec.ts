import { describe, expect, it } from '@jest/globals';
import type { ComputeOutcome, DecisionResult, Step, Transition } from '@strata/workflow';
import { MAX_EXECUTED_STEPS } from '@strata/workflow';
import { driveRun, type RunPlan, type RunPorts, type StepAt } from './run-loop.js';

const ref = { workspace: 'acme', orchestrationId: 'orch_1', runId: 'orun_1' };

/** Ports that record every call and answer compute attempts from `outcomes` (step id → outcomes in order). */
function recorder(plan: RunPlan | null, outcomes: Record<string, ComputeOutcome[]> = {}, closeAfter = Infinity) {
  const calls: string[] = [];
  const sleeps: number[] = [];
  let finished: Transition | undefined;
  let effects = 0;
  const open = () => ++effects <= closeAfter;
  const ports: RunPorts = {
    begin: async () => plan,
    decision: async (_r, at: StepAt, result: DecisionResult) => {
      calls.push(`decision ${at.stepId}@${at.position} -> ${result.selectedNextStepId}`);
      return open();
    },
    delayStarted: async (_r, at, ms) => {
      calls.push(`delay ${at.stepId}@${at.position} ${ms}`);
      return open();
    },
    delayEnded: async (_r, at) => {
      calls.push(`resume ${at.stepId}@${at.position}`);
      return open();
    },
    compute: async (_r, at) => {
      calls.push(`compute ${at.stepId}#${at.attempt}@${at.position}`);
      if (!open()) return null;
      return outcomes[at.stepId]!.shift()!;
    },
    finish: async (_r, t) => {
      finished = t;
    },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  };
  return { ports, calls, sleeps, finished: () => finished };
}

const planOf = (steps: Step[], executed = 0): RunPlan => ({
  steps,
  stepId: steps[0]!.id,
  attempt: 1,
  scope: { input: { amount: 150 }, context: {}, steps: {} },
  executed,
});
const ok = (output: unknown): ComputeOutcome => ({ ok: true, output: output as never });
const failed: ComputeOutcome = { ok: false, error: { message: 'provider down', code: 'Error' } };

describe('driveRun, the Temporal workflow loop', () => {
  it('runs compute, decision and delay steps in order; a decision reads the output of an earlier step', async () => {
    const steps: Step[] = [
      { id: 'charge', type: 'compute', functionId: 'f1', nextStepId: 'route' },
      {
        id: 'route',
        type: 'decision',
        cases: [{ conditions: [{ path: 'steps.charge.output.amount', op: 'gt', value: 100 }], nextStepId: 'cool' }],
      },
      { id: 'cool', type: 'delay', delayMs: 300, nextStepId: 'notify' },
      { id: 'notify', type: 'compute', functionId: 'f2' },
    ];
    const r = recorder(planOf(steps), { charge: [ok({ amount: 150 })], notify: [ok(null)] });
    await expect(driveRun(ref, r.ports)).resolves.toBe('completed');
    expect(r.calls).toEqual([
      'compute charge#1@0',
      'decision route@1 -> cool',
      'delay cool@2 300',
      'resume cool@2',
      'compute notify#1@3',
    ]);
    expect(r.sleeps).toEqual([300]);
    expect(r.finished()).toEqual({ kind: 'go', nextStepId: null });
  });

  it.each([
    ['fail', 'failed', { kind: 'fail' }],
    ['end', 'completed', { kind: 'end' }],
  ] as const)(
    'retries a failing step after the backoff (doubling), then onFailure %s',
    async (action, end, transition) => {
      const steps: Step[] = [
        {
          id: 'call',
          type: 'compute',
          functionId: 'f',
          retry: { maxAttempts: 3, backoffMs: 100 },
          onFailure: { action },
        },
      ];
      const r = recorder(planOf(steps), { call: [failed, failed, failed] });
      await expect(driveRun(ref, r.ports)).resolves.toBe(end);
      expect(r.calls).toEqual(['compute call#1@0', 'compute call#2@1', 'compute call#3@2']);
      expect(r.sleeps).toEqual([100, 200]);
      expect(r.finished()).toMatchObject({ ...transition, reason: expect.stringContaining('after 3 attempts') });
    },
  );

  it('goes on with the attempt that succeeds', async () => {
    const steps: Step[] = [{ id: 'call', type: 'compute', functionId: 'f', retry: { maxAttempts: 3, backoffMs: 50 } }];
    const r = recorder(planOf(steps), { call: [failed, ok(1)] });
    await expect(driveRun(ref, r.ports)).resolves.toBe('completed');
    expect(r.calls).toEqual(['compute call#1@0', 'compute call#2@1']);
  });

  it('stops without finishing when the run was closed (cancelled) meanwhile', async () => {
    const steps: Step[] = [
      { id: 'wait', type: 'delay', delayMs: 1000, nextStepId: 'call' },
      { id: 'call', type: 'compute', functionId: 'f' },
    ];
    const r = recorder(planOf(steps), {}, 1);
    await expect(driveRun(ref, r.ports)).resolves.toBe('closed');
    expect(r.calls).toEqual(['delay wait@0 1000', 'resume wait@0']);
    expect(r.finished()).toBeUndefined();
    const gone = recorder(null);
    await expect(driveRun(ref, gone.ports)).resolves.toBe('closed');
  });

  it('resumes a retried run at its failed step, counting from the steps it executed', async () => {
    const steps: Step[] = [
      { id: 'charge', type: 'compute', functionId: 'f1', nextStepId: 'notify' },
      { id: 'notify', type: 'compute', functionId: 'f2' },
    ];
    const plan = { ...planOf(steps, 2), stepId: 'notify' };
    const r = recorder(plan, { notify: [ok(1)] });
    await driveRun(ref, r.ports);
    expect(r.calls).toEqual(['compute notify#1@2']);
  });

  it('fails a run that reaches the cap on executed steps, and one whose step is missing', async () => {
    const loop: Step[] = [
      { id: 'a', type: 'delay', delayMs: 1, nextStepId: 'b' },
      { id: 'b', type: 'decision', cases: [], defaultNextStepId: 'a' },
    ];
    const r = recorder(planOf(loop));
    await expect(driveRun(ref, r.ports)).resolves.toBe('failed');
    expect(r.calls.filter((c) => c.startsWith('resume') || c.startsWith('decision'))).toHaveLength(MAX_EXECUTED_STEPS);
    expect(r.finished()).toMatchObject({ kind: 'fail', reason: expect.stringContaining(String(MAX_EXECUTED_STEPS)) });

    const missing = recorder({ ...planOf(loop), stepId: 'gone' });
    await expect(driveRun(ref, missing.ports)).resolves.toBe('failed');
    expect(missing.finished()).toEqual({ kind: 'fail', reason: 'Step gone does not exist' });
  });
});
