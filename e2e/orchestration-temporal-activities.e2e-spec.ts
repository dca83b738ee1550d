import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MockActivityEnvironment } from '@temporalio/testing';
import { eventually } from '@strata/testing';
import { driveRun, RunActivities, type RunPorts, type RunRef } from '@strata/orchestration';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

/**
 * The Temporal engine without a Temporal server: the workflow's loop
 * (`driveRun`) drives the real activities, each run in Temporal's
 * MockActivityEnvironment (an activity context with heartbeats and
 * cancellation), against the real compute service, Postgres and NATS. Timers
 * are plain sleeps. The orchestration service's own engine is off, so only
 * this loop moves the runs.
 */
let stack: Stack;
let replica: Awaited<ReturnType<Stack['startOrchestrationReplica']>>;
let activities: RunActivities;
const ws = `otmp-${Date.now().toString(36)}`;
let token: string;
const fns: Record<string, string> = {};
const base = () => `${stack.baseUrl}/orchestration/ws/${ws}/api/v1`;

/** Ports whose activities run in a fresh MockActivityEnvironment each, as a worker runs them. */
function ports(): RunPorts {
  const run =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      new MockActivityEnvironment().run(fn, ...args);
  return {
    begin: run(activities.begin.bind(activities)),
    decision: run(activities.decision.bind(activities)),
    delayStarted: run(activities.delayStarted.bind(activities)),
    delayEnded: run(activities.delayEnded.bind(activities)),
    compute: run(activities.compute.bind(activities)),
    finish: run(activities.finish.bind(activities)),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
}

async function startRun(steps: unknown[], input: unknown): Promise<RunRef> {
  const slug = `o-${Math.random().toString(36).slice(2, 8)}`;
  const made = await call('POST', `${base()}/orchestrations`, {
    token,
    body: { slug, name: slug, status: 'active', trigger: { type: 'on-demand' }, steps },
  });
  expect(made.status).toBe(201);
  const started = await call('POST', `${base()}/orchestrations/${made.body.id}/runs`, { token, body: { input } });
  expect(started.status).toBe(201);
  return { workspace: ws, orchestrationId: made.body.id, runId: started.body.id };
}

const read = async (ref: RunRef) =>
  (await call('GET', `${base()}/orchestrations/${ref.orchestrationId}/runs/${ref.runId}?include=steps`, { token }))
    .body;

beforeAll(async () => {
  stack = await startStack({ ORCHESTRATION_ENGINE_ENABLED: 'false', ORCHESTRATION_POLL_MS: '25' });
  await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
  replica = await stack.startOrchestrationReplica({
    ORCHESTRATION_ENGINE_ENABLED: 'false',
    ORCHESTRATION_POLL_MS: '25',
  });
  activities = replica.get(RunActivities);
  token = await adminWorkspaceToken(stack, ws);
  const code = {
    charge: 'async function run() { return { success: true, data: { amount: executionParams.input.amount } }; }',
    flaky: "async function run() { throw new Error('provider down'); }",
  };
  for (const [name, source] of Object.entries(code)) {
    fns[name] = (
      await call('POST', `${stack.baseUrl}/data/workspace/${ws}/api/v1/compute-functions`, {
        token,
        body: { name, code: source },
      })
    ).body.id;
  }
});

afterAll(async () => {
  await replica?.close();
  await stack?.stop();
});

describe('the Temporal workflow loop and its activities, without a server', () => {
  it('runs compute, decision and delay steps to completion, recording rows as the embedded engine does', async () => {
    const ref = await startRun(
      [
        { id: 'charge', type: 'compute', functionId: fns['charge'], nextStepId: 'route' },
        {
          id: 'route',
          type: 'decision',
          cases: [{ conditions: [{ path: 'steps.charge.output.amount', op: 'gt', value: 100 }], nextStepId: 'cool' }],
        },
        { id: 'cool', type: 'delay', delayMs: 200 },
      ],
      { amount: 150 },
    );
    await expect(driveRun(ref, ports())).resolves.toBe('completed');
    const run = await read(ref);
    expect(run).toMatchObject({
      status: 'completed',
      executedSteps: ['charge', 'route', 'cool'],
      stepOutputs: { charge: { amount: 150 } },
      delayStepCount: 1,
      hasErrors: false,
    });
    expect(run.steps.map((s: any) => [s.stepId, s.attempt, s.status])).toEqual([
      ['charge', 1, 'succeeded'],
      ['route', 1, 'succeeded'],
      ['cool', 1, 'succeeded'],
    ]);
    expect(run.steps[1].decisionResult).toMatchObject({ matchedCaseIndex: 0, selectedNextStepId: 'cool' });
    expect(run.steps[2].delayConfig).toMatchObject({ delayMs: 200, resumedAt: expect.any(String) });
  });

  it('gives each attempt of a failing step its own row, then applies onFailure', async () => {
    const ref = await startRun(
      [
        {
          id: 'call',
          type: 'compute',
          functionId: fns['flaky'],
          retry: { maxAttempts: 2, backoffMs: 50 },
          onFailure: { action: 'end' },
        },
      ],
      {},
    );
    await expect(driveRun(ref, ports())).resolves.toBe('completed');
    const run = await read(ref);
    expect(run).toMatchObject({ status: 'completed', hasErrors: true });
    expect(run.steps.map((s: any) => [s.attempt, s.status, s.error?.message])).toEqual([
      [1, 'failed', 'provider down'],
      [2, 'failed', 'provider down'],
    ]);
  });

  it('an activity Temporal runs again after it committed records nothing twice', async () => {
    const ref = await startRun(
      [
        { id: 'charge', type: 'compute', functionId: fns['charge'], nextStepId: 'route' },
        { id: 'route', type: 'decision', cases: [], defaultNextStepId: null },
      ],
      { amount: 5 },
    );
    const p = ports();
    const plan = await p.begin(ref);
    expect(plan).toMatchObject({ stepId: 'charge', attempt: 1, executed: 0 });
    const at = { stepId: 'charge', attempt: 1, position: 0 };
    const first = await p.compute(ref, at, 10_000);
    const again = await p.compute(ref, at, 10_000);
    expect(again).toEqual(first);
    expect(first).toEqual({ ok: true, output: { amount: 5 } });
    const decided = { stepId: 'route', attempt: 1, position: 1 };
    const result = {
      evaluatedCases: 0,
      matchedCaseIndex: -1,
      selectedNextStepId: null,
      evaluations: [],
    };
    expect(await p.decision(ref, decided, result)).toBe(true);
    expect(await p.decision(ref, decided, result)).toBe(true);
    const run = await read(ref);
    expect(run.executedSteps).toEqual(['charge', 'route']);
    expect(run.steps.map((s: any) => s.stepId)).toEqual(['charge', 'route']);
  });

  it('a run cancelled in a delay is left alone: the loop ends without moving it', async () => {
    const ref = await startRun(
      [
        { id: 'wait', type: 'delay', delayMs: 800, nextStepId: 'charge' },
        { id: 'charge', type: 'compute', functionId: fns['charge'] },
      ],
      { amount: 1 },
    );
    const driving = driveRun(ref, ports());
    await eventually(async () => ((await read(ref)).status === 'waiting' ? true : undefined), 10_000, 20);
    const cancelled = await call('POST', `${base()}/orchestrations/${ref.orchestrationId}/runs/${ref.runId}/cancel`, {
      token,
    });
    expect(cancelled.status).toBe(200);
    await expect(driving).resolves.toBe('closed');
    const run = await read(ref);
    expect(run).toMatchObject({ status: 'failed', failureReason: expect.stringContaining('Cancelled by') });
    expect(run.steps.map((s: any) => [s.stepId, s.status])).toEqual([['wait', 'failed']]);
  });
});
