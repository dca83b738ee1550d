import { createHmac } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { eventually } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';
import { collectMetrics } from './support/metrics.js';
import { temporalEngines } from './support/temporal.js';

// The services of the stack run in this process: their instruments are made with this provider.
const collected = collectMetrics();
afterAll(() => collected.stop());

let stack: Stack;
const ws = `orun-${Date.now().toString(36)}`;
let token: string;
const fns: Record<string, string> = {};

const base = () => `${stack.baseUrl}/orchestration/ws/${ws}/api/v1`;
const CODE = {
  charge: 'async function run() { return { success: true, data: { amount: executionParams.input.amount } }; }',
  notify: 'async function run() { return { success: true, data: { notified: executionParams.steps.charge.amount } }; }',
  flaky: "async function run() { throw new Error('provider down'); }",
  slow: 'async function run() { await new Promise((r) => setTimeout(r, 1500)); return { slept: true }; }',
  count:
    'async function run() { return { success: true, data: { n: (executionParams.steps.count?.n ?? 0) + 1, at: Math.random() } }; }',
  echoInput: 'async function run() { return { success: true, data: executionParams.input }; }',
  // An earlier step's output where the paths name it (docs/orchestration.md), and the same read the old way.
  doubled:
    'async function run() { return { success: true, data: { x: executionParams.steps.charge.output.amount * 2 } }; }',
  doubledOld:
    'async function run() { return { success: true, data: { x: executionParams.steps.charge.amount * 2 } }; }',
};

async function orchestration(slug: string, steps: unknown[]): Promise<string> {
  const made = await call('POST', `${base()}/orchestrations`, {
    token,
    body: { slug, name: slug, status: 'active', trigger: { type: 'on-demand' }, steps },
  });
  expect(made.status).toBe(201);
  return made.body.id;
}

function runUntil(orchestrationId: string, runId: string, done: (r: any) => boolean, ms = 45_000): Promise<any> {
  return eventually(
    async () => {
      const r = await call('GET', `${base()}/orchestrations/${orchestrationId}/runs/${runId}?include=steps`, {
        token,
      });
      return done(r.body) ? r.body : undefined;
    },
    ms,
    50,
  );
}
const runsOf = async (orchestrationId: string): Promise<any[]> =>
  (await call('GET', `${base()}/orchestrations/${orchestrationId}/runs`, { token })).body.data;
const final = (r: any) => r.status === 'completed' || r.status === 'failed';
/** Runs ended so far by `outcome` (strata_orchestration_runs_ended_total), of runs started by hand. */
const ended = (outcome: string) =>
  collected.counted('strata.orchestration.runs.ended', { outcome, trigger_type: 'manual' });
/** Resolves once the count of `outcome` reaches `count` (it moves right after the commit the API already shows). */
const endedReaches = (outcome: string, count: number) =>
  eventually(async () => ((await ended(outcome)) >= count ? ended(outcome) : undefined));

const checkout = () => [
  { id: 'charge', type: 'compute', functionId: fns['charge'], nextStepId: 'route' },
  {
    id: 'route',
    type: 'decision',
    cases: [{ conditions: [{ path: 'steps.charge.output.amount', op: 'gt', value: 100 }], nextStepId: 'cool' }],
  },
  { id: 'cool', type: 'delay', delayMs: 300, nextStepId: 'notify' },
  { id: 'notify', type: 'compute', functionId: fns['notify'] },
];

/** The engine settings of every stack and restart here: fast polls, and the engine under test. */
const FAST = { ORCHESTRATION_POLL_MS: '25', ORCHESTRATION_ENGINE_INTERVAL_MS: '25' };

// The same scenarios on every engine: the embedded one always, Temporal when TEMPORAL_ADDRESS answers.
describe.each<[string, Record<string, string>]>([['embedded', { TEMPORAL_ADDRESS: '' }], ...(await temporalEngines())])(
  'orchestration runs on the %s engine',
  (_engine, engineEnv) => {
    beforeAll(async () => {
      stack = await startStack({ ...FAST, ...engineEnv });
      await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
      token = await adminWorkspaceToken(stack, ws);
      for (const [name, code] of Object.entries(CODE)) {
        const fn = await call('POST', `${stack.baseUrl}/data/workspace/${ws}/api/v1/compute-functions`, {
          token,
          body: { name, code },
        });
        fns[name] = fn.body.id;
      }
    });

    afterAll(async () => {
      await stack?.stop();
    });

    it('runs compute, decision and delay steps to completion, recording every step', async () => {
      const id = await orchestration('checkout', checkout());
      const started = await call('POST', `${base()}/orchestrations/${id}/runs`, {
        token,
        body: { input: { amount: 150 }, correlationId: 'order-1' },
      });
      expect(started.status).toBe(201);
      expect(started.body).toMatchObject({
        id: expect.stringMatching(/^orun_/),
        status: 'pending',
        orchestrationVersion: 1,
        correlationId: 'order-1',
        triggerType: 'manual',
        input: { amount: 150 },
      });
      const run = await runUntil(id, started.body.id, final);
      expect(run).toMatchObject({
        status: 'completed',
        executedSteps: ['charge', 'route', 'cool', 'notify'],
        stepOutputs: { charge: { amount: 150 }, notify: { notified: 150 } },
        delayStepCount: 1,
        hasErrors: false,
        failureReason: null,
        completedAt: expect.any(String),
        ttlExpiresAt: expect.any(String),
      });
      expect(run.steps.map((s: any) => [s.stepId, s.stepType, s.attempt, s.status])).toEqual([
        ['charge', 'compute', 1, 'succeeded'],
        ['route', 'decision', 1, 'succeeded'],
        ['cool', 'delay', 1, 'succeeded'],
        ['notify', 'compute', 1, 'succeeded'],
      ]);
      expect(run.steps[0]).toMatchObject({
        functionId: fns['charge'],
        functionRunId: expect.any(String),
        output: { amount: 150 },
      });
      expect(run.steps[1].decisionResult).toMatchObject({ matchedCaseIndex: 0, selectedNextStepId: 'cool' });
      expect(run.steps[2].delayConfig).toMatchObject({
        delayMs: 300,
        resumeAt: expect.any(String),
        resumedAt: expect.any(String),
      });
      const fnRun = await call(
        'GET',
        `${stack.baseUrl}/data/workspace/${ws}/api/v1/function-runs/${run.steps[0].functionRunId}`,
        { token },
      );
      expect(fnRun.body).toMatchObject({ status: 'succeeded' });

      const small = await call('POST', `${base()}/orchestrations/${id}/trigger`, {
        token,
        body: { input: { amount: 50 } },
      });
      expect(small.status).toBe(201);
      const ended = await runUntil(id, small.body.id, final);
      expect(ended).toMatchObject({ status: 'completed', executedSteps: ['charge', 'route'] });
      expect(ended.steps[1].decisionResult).toMatchObject({ matchedCaseIndex: -1, selectedNextStepId: null });

      const steps = await call('GET', `${base()}/orchestrations/${id}/runs/${small.body.id}/steps`, { token });
      expect(steps.body.data).toHaveLength(2);
      const listed = await call('GET', `${base()}/orchestrations/${id}/runs?status=completed`, { token });
      expect(listed.body.meta).toEqual({ total: 2, page: 1, pageSize: 20 });
    });

    it("hands a compute step's function the earlier outputs at steps.<id>.output, the old form warned in its run's logs", async () => {
      const functionRun = async (runId: string) =>
        (await call('GET', `${stack.baseUrl}/data/workspace/${ws}/api/v1/function-runs/${runId}`, { token })).body;
      const outcomes: Record<string, { run: any; logs: any[] }> = {};
      for (const fn of ['doubled', 'doubledOld']) {
        const id = await orchestration(`paths-${fn.toLowerCase()}`, [
          { id: 'charge', type: 'compute', functionId: fns['charge'], nextStepId: 'double' },
          { id: 'double', type: 'compute', functionId: fns[fn] },
        ]);
        const started = await call('POST', `${base()}/orchestrations/${id}/runs`, {
          token,
          body: { input: { amount: 21 } },
        });
        const run = await runUntil(id, started.body.id, final);
        outcomes[fn] = { run, logs: (await functionRun(run.steps[1].functionRunId)).logs };
      }
      for (const fn of ['doubled', 'doubledOld']) {
        const { run } = outcomes[fn]!;
        expect({ fn, run }).toMatchObject({
          fn,
          run: { status: 'completed', stepOutputs: { charge: { amount: 21 }, double: { x: 42 } } },
        });
        // The step row's input is what its function was sent (less `orchestration`).
        expect(run.steps[1].input).toEqual({
          input: { amount: 21 },
          context: {},
          steps: { charge: { output: { amount: 21 } } },
        });
      }
      // A re-run of the old-form step's function run keeps the old form, and warns again.
      const rerun = await call(
        'POST',
        `${stack.baseUrl}/data/workspace/${ws}/api/v1/function-runs/${outcomes['doubledOld']!.run.steps[1].functionRunId}/rerun`,
        { token, body: {} },
      );
      expect(rerun.status).toBe(200);
      const rerunRow = await eventually(
        async () => {
          const listed = await call(
            'GET',
            `${stack.baseUrl}/data/workspace/${ws}/api/v1/function-runs?jobId=${rerun.body.jobId}`,
            { token },
          );
          const r = listed.body.runs[0];
          return r && r.status !== 'queued' && r.status !== 'running' ? r : undefined;
        },
        45_000,
        50,
      );
      expect(rerunRow).toMatchObject({ status: 'succeeded', result: { success: true, data: { x: 42 } } });
      expect(rerunRow.logs.map((l: any) => l.level)).toEqual(['warn']);
      expect(outcomes['doubled']!.logs).toEqual([]);
      expect(outcomes['doubledOld']!.logs).toEqual([
        {
          level: 'warn',
          message:
            "Deprecated: executionParams.steps.charge.amount reads step 'charge' output the old way; read " +
            'executionParams.steps.charge.output.amount instead. The old form is removed after 2027-03-01 (docs/orchestration.md).',
          at: expect.any(Number),
        },
      ]);
    });

    it('retries a failing compute step with its backoff, each attempt its own step, then applies onFailure', async () => {
      const [failedBefore, completedBefore] = [await ended('failed'), await ended('completed')];
      const failing = await orchestration('failing', [
        { id: 'call', type: 'compute', functionId: fns['flaky'], retry: { maxAttempts: 2, backoffMs: 100 } },
      ]);
      const failed = await runUntil(
        failing,
        (await call('POST', `${base()}/orchestrations/${failing}/runs`, { token, body: {} })).body.id,
        final,
      );
      expect(failed).toMatchObject({ status: 'failed', hasErrors: true });
      expect(failed.failureReason).toContain('Step call failed after 2 attempts: provider down');
      expect(failed.steps.map((s: any) => [s.attempt, s.status, s.error?.message])).toEqual([
        [1, 'failed', 'provider down'],
        [2, 'failed', 'provider down'],
      ]);
      const ending = await orchestration('ending', [
        { id: 'call', type: 'compute', functionId: fns['flaky'], onFailure: { action: 'end' } },
      ]);
      const endedRun = await runUntil(
        ending,
        (await call('POST', `${base()}/orchestrations/${ending}/runs`, { token, body: {} })).body.id,
        final,
      );
      expect(endedRun).toMatchObject({ status: 'completed', hasErrors: true, failureReason: null });
      expect(endedRun.errors).toEqual([expect.objectContaining({ stepId: 'call', message: 'provider down' })]);
      // Each run counted once as it ended, whatever its steps' retries: one failed, one completed (ended by onFailure).
      expect(await endedReaches('failed', failedBefore + 1)).toBe(failedBefore + 1);
      expect(await endedReaches('completed', completedBefore + 1)).toBe(completedBefore + 1);
    });

    it('waits in a delay, and a restart in the middle of it resumes the run without running a completed step again', async () => {
      const id = await orchestration('patient', [
        { id: 'charge', type: 'compute', functionId: fns['charge'], nextStepId: 'wait' },
        { id: 'wait', type: 'delay', delayMs: 2000, nextStepId: 'notify' },
        { id: 'notify', type: 'compute', functionId: fns['notify'] },
      ]);
      const started = await call('POST', `${base()}/orchestrations/${id}/runs`, {
        token,
        body: { input: { amount: 7 } },
      });
      const waiting = await runUntil(id, started.body.id, (r) => r.status === 'waiting');
      expect(waiting.currentStepId).toBe('wait');
      await stack.restartOrchestration({ ...FAST, ...engineEnv });
      const done = await runUntil(id, started.body.id, final);
      expect(done).toMatchObject({ status: 'completed', executedSteps: ['charge', 'wait', 'notify'] });
      expect(done.steps.filter((s: any) => s.stepId === 'charge')).toHaveLength(1);
    });

    it('a restart in the middle of a compute step waits for the function run it started, never starting another', async () => {
      const id = await orchestration('slow-step', [
        { id: 'nap', type: 'compute', functionId: fns['slow'], nextStepId: 'charge' },
        { id: 'charge', type: 'compute', functionId: fns['charge'] },
      ]);
      const started = await call('POST', `${base()}/orchestrations/${id}/runs`, {
        token,
        body: { input: { amount: 1 } },
      });
      // Once compute has started the step's function run (its id recorded on the step).
      const inFlight = await runUntil(id, started.body.id, (r) =>
        r.steps?.some((s: any) => s.status === 'running' && s.functionRunId),
      );
      expect(inFlight.currentStepId).toBe('nap');
      await stack.restartOrchestration({ ...FAST, ...engineEnv });
      const done = await runUntil(id, started.body.id, final);
      expect(done).toMatchObject({ status: 'completed', stepOutputs: { nap: { slept: true }, charge: { amount: 1 } } });
      const naps = done.steps.filter((s: any) => s.stepId === 'nap');
      expect(naps).toHaveLength(1);
      expect(naps[0].functionRunId).toBe(inFlight.steps[0].functionRunId);
    });

    it('cancels a waiting run, and retries a failed run from its failed step keeping earlier outputs', async () => {
      const cancelledBefore = await ended('cancelled');
      const id = await orchestration('cancellable', [
        { id: 'charge', type: 'compute', functionId: fns['charge'], nextStepId: 'wait' },
        { id: 'wait', type: 'delay', delayMs: 60_000 },
      ]);
      const started = await call('POST', `${base()}/orchestrations/${id}/runs`, {
        token,
        body: { input: { amount: 3 } },
      });
      await runUntil(id, started.body.id, (r) => r.status === 'waiting');
      const cancelled = await call('POST', `${base()}/orchestrations/${id}/runs/${started.body.id}/cancel`, { token });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({
        status: 'failed',
        failureReason: expect.stringContaining('Cancelled by'),
      });
      const steps = (await call('GET', `${base()}/orchestrations/${id}/runs/${started.body.id}/steps`, { token })).body
        .data;
      expect(steps.map((s: any) => [s.stepId, s.status])).toEqual([
        ['charge', 'succeeded'],
        ['wait', 'failed'],
      ]);
      expect(
        (await call('POST', `${base()}/orchestrations/${id}/runs/${started.body.id}/cancel`, { token })).status,
      ).toBe(409);
      expect(await endedReaches('cancelled', cancelledBefore + 1)).toBe(cancelledBefore + 1);

      // Retry from the failed step: the delay runs again; the charge output is kept and charge is not re-run.
      const retried = await call('POST', `${base()}/orchestrations/${id}/runs/${started.body.id}/retry`, { token });
      expect(retried.status).toBe(200);
      expect(retried.body).toMatchObject({
        status: 'running',
        currentStepId: 'wait',
        stepOutputs: { charge: { amount: 3 } },
      });
      const waitingAgain = await runUntil(id, started.body.id, (r) => r.status === 'waiting');
      expect(waitingAgain.steps.filter((s: any) => s.stepId === 'charge')).toHaveLength(1);
      const completed = await call('POST', `${base()}/orchestrations/${id}/runs/${started.body.id}/retry`, { token });
      expect(completed.status).toBe(409);
    });

    it('runs a compute step anew on every pass of a loop, and waits at its delay on every pass', async () => {
      const id = await orchestration('poll-loop', [
        { id: 'count', type: 'compute', functionId: fns['count'], nextStepId: 'wait' },
        { id: 'wait', type: 'delay', delayMs: 50, nextStepId: 'check' },
        {
          id: 'check',
          type: 'decision',
          cases: [{ conditions: [{ path: 'steps.count.output.n', op: 'gte', value: 4 }], nextStepId: 'done' }],
          defaultNextStepId: 'count',
        },
        { id: 'done', type: 'decision', cases: [] },
      ]);
      const started = await call('POST', `${base()}/orchestrations/${id}/runs`, { token, body: { input: {} } });
      const run = await runUntil(id, started.body.id, final);
      // Before, every pass got the first pass's function run (the same job id) and the loop never ended.
      expect(run).toMatchObject({ status: 'completed', stepOutputs: { count: { n: 4 } }, delayStepCount: 4 });
      const counts = run.steps.filter((s: any) => s.stepId === 'count');
      expect(counts.map((s: any) => s.output.n)).toEqual([1, 2, 3, 4]);
      expect(new Set(counts.map((s: any) => s.functionRunId)).size).toBe(4);
      expect(run.steps.filter((s: any) => s.stepId === 'wait' && s.status === 'succeeded')).toHaveLength(4);

      // A loop of a decision and a delay alone waits at the delay on every pass too.
      const waits = await orchestration('wait-loop', [
        {
          id: 'again',
          type: 'decision',
          cases: [{ conditions: [{ path: 'input.stop', op: 'exists' }], nextStepId: 'done' }],
          defaultNextStepId: 'nap',
        },
        { id: 'nap', type: 'delay', delayMs: 150, nextStepId: 'again' },
        { id: 'done', type: 'decision', cases: [] },
      ]);
      const looping = await call('POST', `${base()}/orchestrations/${waits}/runs`, { token, body: { input: {} } });
      const seen = await runUntil(waits, looping.body.id, (r) => r.delayStepCount >= 3);
      // Every pass through the delay has its row and its wait: no pass is skipped inside one claim.
      const naps = seen.steps.filter((s: any) => s.stepId === 'nap');
      expect(naps.length).toBeGreaterThanOrEqual(seen.delayStepCount);
      expect(seen.executedSteps.filter((s: string) => s === 'nap').length).toBeLessThanOrEqual(naps.length);
      await call('POST', `${base()}/orchestrations/${waits}/runs/${looping.body.id}/cancel`, { token });
    });

    it('stops the runs of a deleted orchestration, whose runs are then gone from the API', async () => {
      const id = await orchestration('deleted-mid-run', [
        { id: 'charge', type: 'compute', functionId: fns['charge'], nextStepId: 'wait' },
        { id: 'wait', type: 'delay', delayMs: 60_000 },
      ]);
      const started = await call('POST', `${base()}/orchestrations/${id}/runs`, {
        token,
        body: { input: { amount: 1 } },
      });
      await runUntil(id, started.body.id, (r) => r.status === 'waiting');
      expect((await call('DELETE', `${base()}/orchestrations/${id}`, { token })).status).toBe(204);
      for (const path of ['', '/steps']) {
        const gone = await call('GET', `${base()}/orchestrations/${id}/runs/${started.body.id}${path}`, { token });
        expect({ path, status: gone.status }).toEqual({ path, status: 404 });
      }
      // Before, the waiting run carried on and completed after its orchestration was deleted.
      const db = new pg.Client({ connectionString: stack.databaseUrl });
      await db.connect();
      try {
        const { rows } = await db.query('SELECT status, failure_reason FROM orchestration.runs WHERE id = $1', [
          started.body.id,
        ]);
        expect(rows[0]).toMatchObject({ status: 'failed', failure_reason: expect.stringContaining('Cancelled by') });
      } finally {
        await db.end();
      }
    });

    it('runs the function again when a failed run is retried, with its current code', async () => {
      const fn = await call('POST', `${stack.baseUrl}/data/workspace/${ws}/api/v1/compute-functions`, {
        token,
        body: { name: `fixable-${_engine}`, code: "async function run() { throw new Error('first'); }" },
      });
      const id = await orchestration('fixable', [{ id: 'call', type: 'compute', functionId: fn.body.id }]);
      const started = await call('POST', `${base()}/orchestrations/${id}/runs`, { token, body: { input: {} } });
      expect(await runUntil(id, started.body.id, final)).toMatchObject({ status: 'failed' });
      await call('PUT', `${stack.baseUrl}/data/workspace/${ws}/api/v1/compute-functions/${fn.body.id}`, {
        token,
        body: { code: 'async function run() { return { success: true, data: { fixed: true } }; }' },
      });
      const retried = await call('POST', `${base()}/orchestrations/${id}/runs/${started.body.id}/retry`, { token });
      expect(retried.status).toBe(200);
      // Before, the retry was answered with the first attempt's function run and failed again.
      const run = await runUntil(id, started.body.id, final);
      expect(run).toMatchObject({ status: 'completed', stepOutputs: { call: { fixed: true } } });
      const calls = run.steps.filter((s: any) => s.stepId === 'call');
      expect(new Set(calls.map((s: any) => s.functionRunId)).size).toBe(2);
    });

    it('fails a compute step whose parameters are too large to send, instead of leaving the run running', async () => {
      const id = await orchestration('too-large', [
        { id: 'first', type: 'compute', functionId: fns['echoInput'], nextStepId: 'second' },
        { id: 'second', type: 'compute', functionId: fns['echoInput'] },
      ]);
      // The input alone fits; with the first step's output (the same again) the second step's parameters do not.
      const started = await call('POST', `${base()}/orchestrations/${id}/runs`, {
        token,
        body: { input: { blob: 'x'.repeat(600_000) } },
      });
      expect(started.status).toBe(201);
      const run = await runUntil(id, started.body.id, final);
      expect(run).toMatchObject({ status: 'failed', failureReason: expect.stringContaining('bytes of JSON') });
      expect(run.steps.find((s: any) => s.stepId === 'second')).toMatchObject({
        status: 'failed',
        error: { code: 'PARAMETERS_TOO_LARGE' },
      });
    });

    (_engine === 'embedded' ? it : it.skip)(
      'a replica locks no run while it asks compute, asks about four at a time, and a start asked again is the same run',
      async () => {
        // The service behind the gateway stops running its engine; the runs are made due first.
        await stack.restartOrchestration({ ...FAST, ...engineEnv, ORCHESTRATION_ENGINE_ENABLED: 'false' });
        const id = await orchestration('held-none', [{ id: 'charge', type: 'compute', functionId: fns['charge'] }]);
        for (let i = 0; i < 5; i++) {
          const made = await call('POST', `${base()}/orchestrations/${id}/runs`, {
            token,
            body: { input: { amount: i } },
          });
          expect(made.status).toBe(201);
        }
        // A replica whose questions to compute reach compute through the test, whose answers never come back:
        // compute starts each function run, and the replica times out.
        const silentPrefix = `${stack.natsPrefix}_silent`;
        const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
        const startedByCompute: string[] = [];
        // Questions relayed and not answered yet: the connection closes only once they are.
        const relaying = new Set<Promise<unknown>>();
        const silent = nc.subscribe(`${silentPrefix}.compute.functions.run`, {
          callback: (_err, msg) => {
            const relayed = nc
              .request(`${stack.natsPrefix}.compute.functions.run`, msg.data, { timeout: 10_000 })
              .then((reply) => startedByCompute.push(reply.json<{ runId: string }>().runId))
              // A question cut off by the end of the test is one compute did not answer: nothing to record.
              .catch(() => undefined)
              .finally(() => relaying.delete(relayed));
            relaying.add(relayed);
          },
        });
        await nc.flush();
        const replica = await stack.startOrchestrationReplica({
          ...FAST,
          ...engineEnv,
          NATS_PREFIX: silentPrefix,
          ORCHESTRATION_COMPUTE_TIMEOUT_MS: '5000',
        });
        const db = new pg.Client({ connectionString: stack.databaseUrl });
        await db.connect();
        try {
          await eventually(async () => (startedByCompute.length === 4 ? true : undefined), 20_000);
          // Every run's row is free while the replica waits for compute's answers.
          await db.query('BEGIN');
          const free = await db.query(
            'SELECT id FROM orchestration.runs WHERE orchestration_id = $1 FOR UPDATE SKIP LOCKED',
            [id],
          );
          await db.query('ROLLBACK');
          expect(free.rows).toHaveLength(5);
          // The four asked about show their attempt, its function run not yet known; the fifth is due for any replica.
          const steps = await db.query<{ function_run_id: string | null; status: string }>(
            `SELECT s.function_run_id, s.status FROM orchestration.run_steps s
               JOIN orchestration.runs r ON r.id = s.run_id WHERE r.orchestration_id = $1`,
            [id],
          );
          expect(steps.rows).toEqual(Array(4).fill({ function_run_id: null, status: 'running' }));
          const due = await db.query(
            'SELECT id FROM orchestration.runs WHERE orchestration_id = $1 AND due_at <= now()',
            [id],
          );
          expect(due.rows).toHaveLength(1);
        } finally {
          await db.end();
          await replica.close();
          silent.unsubscribe();
          // A question the replica asked just before it closed is answered (or times out) before the connection goes.
          await Promise.allSettled([...relaying]);
          await nc.close();
          await stack.restartOrchestration({ ...FAST, ...engineEnv });
        }
        // With the engine back, each start is asked again with its job id: compute answers the run it started.
        const stepRuns: string[] = [];
        for (const run of await runsOf(id)) {
          const done = await runUntil(id, run.id, final);
          expect(done.status).toBe('completed');
          expect(done.steps).toHaveLength(1);
          stepRuns.push(done.steps[0].functionRunId);
        }
        expect(startedByCompute.every((runId) => stepRuns.includes(runId))).toBe(true);
        expect(new Set(stepRuns).size).toBe(5);
      },
    );

    it('two replicas share the runs and execute every step once', async () => {
      const replica = await stack.startOrchestrationReplica({ ...FAST, ...engineEnv });
      try {
        const id = await orchestration('shared', checkout());
        const ids: string[] = [];
        for (let i = 0; i < 6; i++) {
          ids.push(
            (
              await call('POST', `${base()}/orchestrations/${id}/runs`, {
                token,
                body: { input: { amount: 100 + i * 10 } },
              })
            ).body.id,
          );
        }
        for (const runId of ids) {
          const run = await runUntil(id, runId, final);
          expect(run.status).toBe('completed');
          const counts = new Map<string, number>();
          for (const s of run.steps) counts.set(s.stepId, (counts.get(s.stepId) ?? 0) + 1);
          for (const n of counts.values()) expect(n).toBe(1);
          expect(run.executedSteps).toEqual(run.steps.map((s: any) => s.stepId));
        }
      } finally {
        await replica.close();
      }
    });

    it('starts runs from signed webhooks, by id and by path; 401 on a bad signature, 404 for an unknown path', async () => {
      const made = await call('POST', `${base()}/orchestrations`, {
        token,
        body: {
          slug: 'hooked',
          name: 'Hooked',
          status: 'active',
          trigger: { type: 'http-trigger', path: 'orders', validateSignature: true, signingSecret: 'orch-hook-secret' },
          steps: checkout(),
        },
      });
      expect(made.status).toBe(201);
      const id = made.body.id;
      const body = JSON.stringify({ amount: 120 });
      const sig = createHmac('sha256', 'orch-hook-secret').update(body).digest('hex');
      const send = (url: string, signature: string, payload = body) =>
        call('POST', url, {
          body: payload,
          headers: { 'x-signature': `sha256=${signature}`, 'x-correlation-id': 'hook-1' },
        });

      const byPath = await send(`${base()}/webhooks/orders`, sig);
      expect(byPath.status).toBe(200);
      expect(byPath.body).toEqual({ runId: expect.stringMatching(/^orun_/), status: 'pending' });
      const run = await runUntil(id, byPath.body.runId, final);
      expect(run).toMatchObject({
        status: 'completed',
        triggerType: 'http-trigger',
        triggerMetadata: { webhookPath: 'orders' },
        correlationId: 'hook-1',
        input: { amount: 120 },
      });
      // The same signed request by id: the run it started (plain HMAC requests are remembered for a window).
      const byId = await send(`${base()}/orchestrations/${id}/webhook`, sig);
      expect(byId.status).toBe(200);
      expect(byId.body.runId).toBe(byPath.body.runId);

      expect((await send(`${base()}/webhooks/orders`, '0'.repeat(64))).status).toBe(401);
      expect((await send(`${base()}/webhooks/orders`, sig, JSON.stringify({ amount: 121 }))).status).toBe(401);
      expect((await send(`${base()}/webhooks/nowhere`, sig)).status).toBe(404);
      // A signed body that jsonb cannot hold (NUL) is a 400, not a database error.
      const nul = '{"note":"\\u0000"}';
      const nulSig = createHmac('sha256', 'orch-hook-secret').update(nul).digest('hex');
      expect((await send(`${base()}/webhooks/orders`, nulSig, nul)).status).toBe(400);
      const notObject = '[1,2]';
      const arraySig = createHmac('sha256', 'orch-hook-secret').update(notObject).digest('hex');
      expect((await send(`${base()}/webhooks/orders`, arraySig, notObject)).status).toBe(400);
      // The body rules of every route: a compressed body is decoded (the signature covers it as sent),
      // another content type or charset is a 415, a body that does not decode a 400.
      const raw = async (payload: Buffer, headers: Record<string, string>) => {
        const signature = createHmac('sha256', 'orch-hook-secret').update(payload).digest('hex');
        const res = await fetch(`${base()}/webhooks/orders`, {
          method: 'POST',
          headers: { 'x-signature': `sha256=${signature}`, ...headers },
          body: payload,
        });
        return { status: res.status, body: (await res.json()) as Record<string, any> };
      };
      const zipped = await raw(gzipSync(Buffer.from('{"amount":7}')), {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      });
      expect(zipped.status).toBe(200);
      expect((await runUntil(id, zipped.body.runId, final)).input).toEqual({ amount: 7 });
      const json = { 'content-type': 'application/json' };
      expect((await raw(Buffer.from('not gzip'), { ...json, 'content-encoding': 'gzip' })).status).toBe(400);
      expect((await raw(Buffer.from('{}'), { ...json, 'content-encoding': 'compress' })).status).toBe(415);
      expect((await raw(Buffer.from('{}'), { 'content-type': 'text/plain' })).status).toBe(415);
      expect((await raw(Buffer.from('{}'), { 'content-type': 'application/json; charset=latin1' })).status).toBe(415);
      // Another orchestration cannot take the same path.
      const clash = await call('POST', `${base()}/orchestrations`, {
        token,
        body: { slug: 'hooked-2', name: 'Again', trigger: { type: 'http-trigger', path: 'orders' }, steps: checkout() },
      });
      expect(clash.status).toBe(409);
      // A paused orchestration starts nothing from its trigger (a request it has not seen: the one it ran within
      // the replay window is answered with its run, ORCHESTRATION_HMAC_REPLAY_WINDOW_S).
      await call('PUT', `${base()}/orchestrations/${id}`, { token, body: { status: 'paused' } });
      const unseen = JSON.stringify({ amount: 122 });
      const unseenSig = createHmac('sha256', 'orch-hook-secret').update(unseen).digest('hex');
      expect((await send(`${base()}/webhooks/orders`, unseenSig, unseen)).status).toBe(409);
    });

    it('starts one run per Standard Webhooks delivery: the same webhook-id again answers the first run', async () => {
      const secret = `whsec_${Buffer.from('orchestration delivery secret').toString('base64')}`;
      const made = await call('POST', `${base()}/orchestrations`, {
        token,
        body: {
          slug: 'delivered',
          name: 'Delivered',
          status: 'active',
          trigger: { type: 'http-trigger', path: 'deliveries', validateSignature: true, signingSecret: secret },
          steps: [{ id: 'pause', type: 'delay', delayMs: 1 }],
        },
      });
      expect(made.status).toBe(201);
      const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
      const deliver = (id: string, payload: string, at = Math.floor(Date.now() / 1000)) =>
        call('POST', `${base()}/webhooks/deliveries`, {
          body: payload,
          headers: {
            'webhook-id': id,
            'webhook-timestamp': String(at),
            'webhook-signature': `v1,${createHmac('sha256', key).update(`${id}.${at}.${payload}`).digest('base64')}`,
          },
        });
      const first = await deliver('msg_one', '{"n":1}');
      expect(first.body).toEqual({ runId: expect.stringMatching(/^orun_/), status: 'pending' });
      // The same request again, and the provider's retry (a new timestamp and signature): the first run, no other.
      expect((await deliver('msg_one', '{"n":1}')).body.runId).toBe(first.body.runId);
      const retried = await deliver('msg_one', '{"n":1}', Math.floor(Date.now() / 1000) - 30);
      expect({ status: retried.status, runId: retried.body.runId }).toEqual({ status: 200, runId: first.body.runId });
      // Sent at once, one delivery still starts one run.
      const burst = await Promise.all([1, 2, 3, 4, 5].map(() => deliver('msg_two', '{"n":2}')));
      expect(new Set(burst.map((b) => b.body.runId)).size).toBe(1);
      const other = await deliver('msg_three', '{"n":3}');
      expect(other.body.runId).not.toBe(first.body.runId);
      const runs = await runsOf(made.body.id);
      expect(runs.map((r) => r.input.n).sort()).toEqual([1, 2, 3]);
      // Once the first run ended, its delivery answers it with its status.
      await runUntil(made.body.id, first.body.runId, final);
      expect((await deliver('msg_one', '{"n":1}')).body).toEqual({ runId: first.body.runId, status: 'completed' });
      // Paused since: a retry of a delivery that ran is still answered with its run; a new one is refused.
      await call('PUT', `${base()}/orchestrations/${made.body.id}`, { token, body: { status: 'paused' } });
      expect(await deliver('msg_one', '{"n":1}')).toMatchObject({ status: 200, body: { runId: first.body.runId } });
      expect((await deliver('msg_four', '{"n":4}')).status).toBe(409);
    });

    it('starts one run per record event for an active event-driven orchestration, with the event as input', async () => {
      const data = `${stack.baseUrl}/data/workspace/${ws}/api/v1`;
      const collection = await call('POST', `${data}/structures`, {
        token,
        body: { name: 'Tickets', recordSlug: 'tickets', properties: [{ name: 'n', type: 'number' }] },
      });
      expect(collection.status).toBeLessThan(300);
      const made = await call('POST', `${base()}/orchestrations`, {
        token,
        body: {
          slug: 'on-ticket',
          name: 'On ticket',
          status: 'active',
          trigger: { type: 'event-driven', eventType: 'record_created', structureSlug: 'tickets' },
          steps: [
            {
              id: 'big',
              type: 'decision',
              cases: [{ conditions: [{ path: 'input.data.data.n', op: 'gte', value: 10 }], nextStepId: 'pause' }],
            },
            { id: 'pause', type: 'delay', delayMs: 10 },
          ],
        },
      });
      expect(made.status).toBe(201);
      const records: string[] = [];
      for (const n of [5, 50]) {
        const created = await call('POST', `${data}/records`, {
          token,
          body: { structureId: collection.body.id, data: { n } },
        });
        records.push(created.body.id);
      }
      const runs = await eventually(async () => {
        const listed = await runsOf(made.body.id);
        return listed.filter(final).length >= 2 ? listed : undefined;
      }, 30_000);
      expect(runs).toHaveLength(2);
      for (const run of runs) {
        expect(run).toMatchObject({
          status: 'completed',
          triggerType: 'event-driven',
          triggerMetadata: { eventType: 'record_created' },
        });
        expect(records).toContain(run.input.recordId);
      }
      const bigRun = runs.find((r) => r.input.data.data.n === 50);
      expect(bigRun.executedSteps).toEqual(['big', 'pause']);
      expect(runs.find((r) => r.input.data.data.n === 5).executedSteps).toEqual(['big']);
    });

    it('starts a run on a failure event (record_created_failed), with the failure as input', async () => {
      const data = `${stack.baseUrl}/data/workspace/${ws}/api/v1`;
      const collection = await call('POST', `${data}/structures`, {
        token,
        body: {
          name: 'Strict tickets',
          recordSlug: 'strict-tickets',
          properties: [{ name: 'n', type: 'number', required: true }],
        },
      });
      expect(collection.status).toBeLessThan(300);
      const made = await call('POST', `${base()}/orchestrations`, {
        token,
        body: {
          slug: 'on-refused-ticket',
          name: 'On refused ticket',
          status: 'active',
          trigger: { type: 'event-driven', eventType: 'record.created_failed', structureSlug: 'strict-tickets' },
          steps: [{ id: 'note', type: 'delay', delayMs: 10 }],
        },
      });
      expect(made.status).toBe(201);
      expect(made.body.trigger.eventType).toBe('record_created_failed');
      const refused = await call('POST', `${data}/records`, {
        token,
        body: { structureId: collection.body.id, data: { n: 'not a number' } },
      });
      expect(refused.status).toBeGreaterThanOrEqual(400);
      const [run] = await eventually(async () => {
        const listed = (await runsOf(made.body.id)).filter(final);
        return listed.length >= 1 ? listed : undefined;
      }, 30_000);
      expect(run).toMatchObject({
        status: 'completed',
        triggerMetadata: { eventType: 'record_created_failed' },
        input: { event: 'record_created_failed', recordSlug: 'strict-tickets', error: expect.any(Object) },
      });
    });

    it('starts scheduled runs while active, and pausing takes the orchestration off the schedule', async () => {
      const made = await call('POST', `${base()}/orchestrations`, {
        token,
        body: {
          slug: 'every-second',
          name: 'Every second',
          status: 'active',
          trigger: { type: 'scheduled', scheduleType: 'interval', interval: 1 },
          steps: [{ id: 'tick', type: 'delay', delayMs: 1 }],
        },
      });
      expect(made.status).toBe(201);
      const runs = await eventually(async () => {
        const listed = await runsOf(made.body.id);
        return listed.length > 0 ? listed : undefined;
      }, 20_000);
      expect(runs[0]).toMatchObject({
        triggerType: 'scheduled',
        triggerMetadata: { scheduleId: made.body.id, scheduledFor: expect.any(String) },
        input: { scheduledFor: expect.any(String), firedAt: expect.any(String) },
      });
      const db = new pg.Client({ connectionString: stack.databaseUrl });
      await db.connect();
      try {
        const rows = async () =>
          (await db.query('SELECT due_at FROM orchestration.schedules WHERE orchestration_id = $1', [made.body.id]))
            .rows;
        expect(await rows()).toHaveLength(1);
        await call('PUT', `${base()}/orchestrations/${made.body.id}`, { token, body: { status: 'paused' } });
        expect(await rows()).toHaveLength(0);
      } finally {
        await db.end();
      }
    });

    it('refuses runs of a paused orchestration and answers 404 for unknown ones', async () => {
      const id = await orchestration('paused-one', checkout());
      await call('PUT', `${base()}/orchestrations/${id}`, { token, body: { status: 'paused' } });
      expect((await call('POST', `${base()}/orchestrations/${id}/runs`, { token, body: {} })).status).toBe(409);
      expect((await call('POST', `${base()}/orchestrations/orch_nope/runs`, { token, body: {} })).status).toBe(404);
      expect((await call('GET', `${base()}/orchestrations/${id}/runs/orun_nope`, { token })).status).toBe(404);
      expect((await call('POST', `${base()}/orchestrations/${id}/runs`, { token, body: { input: 'x' } })).status).toBe(
        400,
      );
    });
  },
);
