import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { computeJobSubject, functionRunStartSubject } from '@strata/contracts';
import { eventually } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack, type WorkerProcess } from '@strata/testkit';

let stack: Stack;
let worker: WorkerProcess;
const suffix = Date.now().toString(36);
const ws = `runs-${suffix}`;
const otherWs = `runs-other-${suffix}`;
let token: string;
let otherToken: string;

/** Small limits so the abusive functions below end quickly; the worker gets them from its runs. */
const LIMITS = {
  COMPUTE_WALL_MS: '3000',
  COMPUTE_CPU_MS: '1500',
  COMPUTE_MEMORY_MB: '32',
  COMPUTE_SWEEP_INTERVAL_MS: '200',
};

beforeAll(async () => {
  stack = await startStack(LIMITS);
  worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
  token = await adminWorkspaceToken(stack, ws);
  otherToken = await adminWorkspaceToken(stack, otherWs);
});

afterAll(async () => {
  await stack?.stop();
});

const base = (workspace = ws) => `${stack.baseUrl}/data/workspace/${workspace}/api/v1`;
const FINAL = ['succeeded', 'failed', 'timed_out', 'cancelled'];

async function test(code: string, params: unknown = {}): Promise<string> {
  const queued = await call('POST', `${base()}/compute-functions/test`, { token, body: { code, params } });
  expect(queued.status).toBe(200);
  expect(queued.body).toEqual({ jobId: expect.any(String), status: 'queued', queuedAt: expect.any(String) });
  return queued.body.jobId as string;
}

/** The run of a job once it is final (polled with a deadline; no timing is asserted). */
async function finished(jobId: string, deadlineMs = 45_000): Promise<Record<string, any>> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const listed = await call('GET', `${base()}/function-runs?jobId=${jobId}`, { token });
    expect(listed.status).toBe(200);
    const run = listed.body.runs[0];
    if (run && FINAL.includes(run.status)) {
      const detail = await call('GET', `${base()}/function-runs/${run.id}`, { token });
      expect(detail.status).toBe(200);
      return detail.body;
    }
    if (Date.now() > until) throw new Error(`run of job ${jobId} not final: ${JSON.stringify(run)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const run = async (code: string, params: unknown = {}) => finished(await test(code, params));

/** Jobs of the work queue a worker holds and has not acknowledged (taken, not claimed or recorded yet). */
async function jobsHeld(): Promise<number> {
  const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.consumers.info(`${stack.natsPrefix}_compute_jobs`, `${stack.natsPrefix}_compute_workers`);
    return info.num_ack_pending;
  } finally {
    await nc.close();
  }
}

describe('function runs through the test endpoint', () => {
  it('runs code with executionParams and records the result, logs, timings and code hash', async () => {
    const code = `async function run() {
      api.log('hello', executionParams.name);
      return { success: true, data: { greeting: 'hi ' + executionParams.name, trigger: triggerParams } };
    }`;
    const r = await run(code, { name: 'ada' });
    expect(r).toMatchObject({
      status: 'succeeded',
      executionSource: 'manual',
      functionId: null,
      functionCodeHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      result: { success: true, data: { greeting: 'hi ada', trigger: {} } },
      error: null,
      storedParameters: { encrypted: true, keyVersion: expect.any(Number) },
      executionContext: {
        trigger: { name: 'system-default' },
        invocationDepth: 0,
        environment: { runtime: 'isolated-vm' },
      },
      memoryUsageBytes: expect.any(Number),
      cpuUsageSeconds: expect.any(Number),
    });
    expect(r.logs).toEqual([expect.objectContaining({ level: 'info', message: expect.stringContaining('hello') })]);
    for (const t of ['queuedAt', 'startedAt', 'finishedAt']) expect(Date.parse(r[t])).not.toBeNaN();
    expect(Date.parse(r.finishedAt)).toBeGreaterThanOrEqual(Date.parse(r.startedAt));
    // The parameters are not in the record in the clear.
    expect(JSON.stringify(r)).not.toContain('"name":"ada"');
  });

  it('records a throw and a {success: false} return as failed, with the error', async () => {
    const thrown = await run('async function run() { throw new TypeError("bad input"); }');
    expect(thrown).toMatchObject({ status: 'failed', error: { name: 'TypeError', message: 'bad input' } });
    expect(thrown.error.stack).toContain('function.js');
    expect(thrown.error.stack).not.toMatch(/node:|\/apps\/|\/libs\//);
    const returned = await run('async function run() { return { success: false, error: "provider said no" }; }');
    expect(returned).toMatchObject({
      status: 'failed',
      result: { success: false, error: 'provider said no' },
      error: { message: 'provider said no' },
    });
  });

  it('offers api.hmacSha256, refuses api.searchRecords, and logs every call with its duration', async () => {
    const r = await run(`async function run() {
      const mac = await api.hmacSha256('key', 'message');
      let removed;
      try { await api.searchRecords({}); } catch (e) { removed = e.message; }
      return { success: true, data: { mac, removed } };
    }`);
    expect(r.status).toBe('succeeded');
    expect(r.result.data.mac).toBe(createHmac('sha256', 'key').update('message').digest('hex'));
    expect(r.result.data.removed).toMatch(/not found|not a function/i);
    expect(r.apiCalls).toEqual([
      expect.objectContaining({ method: 'hmacSha256', ok: true, durationMs: expect.any(Number) }),
    ]);
  });

  it('contains misbehaving code, reports it on its run, and keeps serving', async () => {
    const cases: [string, string, (r: Record<string, any>) => void][] = [
      [
        'sync loop',
        'async function run() { api.log("before the loop"); for (;;) {} }',
        // What was logged before the limit is kept.
        (r) => expect(r).toMatchObject({ status: 'timed_out', logs: [{ message: 'before the loop' }] }),
      ],
      ['async loop', 'async function run() { for (;;) { await null; } }', (r) => expect(r.status).toBe('timed_out')],
      [
        // Nothing pending (no api call, no timer): nothing can resume it, so it ends without waiting for its wall clock.
        'never settles',
        'async function run() { await new Promise(() => {}); }',
        (r) => expect(r).toMatchObject({ status: 'failed', error: { name: 'NeverSettled' } }),
      ],
      [
        'waits on a timer past its wall clock',
        'async function run() { await new Promise((resolve) => setTimeout(resolve, 1e9)); }',
        (r) => expect(r).toMatchObject({ status: 'timed_out', error: { name: 'TimeoutError' } }),
      ],
      [
        'recursion',
        'async function run() { const f = (n) => f(n + 1) + 1; return f(0); }',
        (r) => expect(r).toMatchObject({ status: 'failed', error: { name: 'RangeError' } }),
      ],
      [
        'memory bomb',
        // A heap bomb ends at the heap limit, or, when V8's collector thrashes near the limit on a
        // busy machine, at the CPU limit first: either way contained, reported, and logs kept.
        'async function run() { api.log("allocating"); const a = []; for (;;) a.push(new Array(1e6).fill(a.length)); }',
        (r) => {
          expect(r.logs).toEqual([expect.objectContaining({ message: 'allocating' })]);
          expect([
            ['failed', 'MemoryLimitExceeded'],
            ['timed_out', 'TimeoutError'],
          ]).toContainEqual([r.status, r.error.name]);
        },
      ],
      [
        'host escape',
        `async function run() { return { success: true, data: constructor.constructor('return typeof process')() }; }`,
        (r) => expect(r).toMatchObject({ status: 'succeeded', result: { data: 'undefined' } }),
      ],
      [
        'host globals',
        `async function run() { return { success: true, data: [typeof process, typeof require, typeof Buffer, typeof fetch] }; }`,
        (r) => expect(r.result.data).toEqual(['undefined', 'undefined', 'undefined', 'undefined']),
      ],
      [
        'dynamic import',
        `async function run() { await import('fs'); return { success: true }; }`,
        (r) => expect(r.status).toBe('failed'),
      ],
      [
        'huge logs',
        'async function run() { for (let i = 0; i < 5000; i++) api.log("x".repeat(1000)); return { success: true }; }',
        (r) => expect(r).toMatchObject({ status: 'succeeded', logsTruncated: true }),
      ],
      [
        'huge return',
        'async function run() { return { success: true, data: "x".repeat(20 * 1024 * 1024) }; }',
        (r) => expect(r.status).not.toBe('succeeded'),
      ],
      [
        // Its loop runs under its own limits or dies with its isolate, never in a later run.
        'loop left behind an unawaited api call',
        'async function run() { api.hmacSha256("k", "v").then(() => { for (;;) {} }); return { success: true, data: "left" }; }',
        (r) => expect(['succeeded', 'timed_out']).toContain(r.status),
      ],
      [
        'cleanup callback for a later garbage collection',
        'async function run() { new FinalizationRegistry(() => { for (;;) {} }); return { success: true }; }',
        (r) => expect(r).toMatchObject({ status: 'failed', error: { name: 'ReferenceError' } }),
      ],
    ];
    const jobs = await Promise.all(cases.map(([, code]) => test(code)));
    const runs = await Promise.all(jobs.map((job) => finished(job)));
    cases.forEach(([name, , check], i) => {
      try {
        check(runs[i]!);
      } catch (err) {
        throw new Error(`${name}: ${(err as Error).message}\n${JSON.stringify(runs[i])}`, { cause: err });
      }
    });
    // The worker is alive and serves the next runs, on every isolate, with nothing of the ones before.
    const next = await Promise.all(
      [1, 2, 3, 4].map((n) => run(`async function run() { return { success: true, data: ${n} }; }`)),
    );
    expect(next.map((r) => [r.status, r.result?.data])).toEqual([1, 2, 3, 4].map((n) => ['succeeded', n]));
  });

  it('refuses bad test requests', async () => {
    expect(
      await call('POST', `${base()}/compute-functions/test`, { token, body: { code: 'async function run() {' } }),
    ).toMatchObject({ status: 400 });
    const noParams = await call('POST', `${base()}/compute-functions/test`, {
      token,
      body: { code: 'async function run() {}', params: [1] },
    });
    expect(noParams).toMatchObject({ status: 400, body: { details: [{ field: 'params' }] } });
  });

  it('keeps runs in their workspace', async () => {
    const job = await test('async function run() { return { success: true }; }');
    const r = await finished(job);
    expect((await call('GET', `${base(otherWs)}/function-runs/${r.id}`, { token: otherToken })).status).toBe(404);
    expect((await call('GET', `${base(otherWs)}/function-runs?jobId=${job}`, { token: otherToken })).body.runs).toEqual(
      [],
    );
  });

  it("answers a test run's result and logs in the list filtered by its jobId; other lists stay light", async () => {
    const jobId = await test(
      `async function run() {
        console.log('starting', executionParams.n);
        api.log.warn('careful');
        for (let i = 0; i < 1005; i++) console.log('line ' + i);
        return { success: true, data: { doubled: executionParams.n * 2 } };
      }`,
      { n: 21 },
    );
    // The spec's "Test results: GET /function-runs?jobId=<job_id>", polled until the run has ended.
    const row = await eventually(
      async () => {
        const listed = await call('GET', `${base()}/function-runs?jobId=${jobId}`, { token });
        expect(listed.status).toBe(200);
        const r = listed.body.runs[0];
        return r && FINAL.includes(r.status) ? r : undefined;
      },
      45_000,
      100,
    );
    expect(row).toMatchObject({ jobId, status: 'succeeded', result: { success: true, data: { doubled: 42 } } });
    expect(row.logs.slice(0, 2)).toEqual([
      { level: 'info', message: 'starting 21', at: expect.any(Number) },
      { level: 'warn', message: 'careful', at: expect.any(Number) },
    ]);
    // Bounded as the detail bounds them: the same lines, cut at COMPUTE_MAX_LOG_ENTRIES.
    const detail = await call('GET', `${base()}/function-runs/${row.id}`, { token });
    expect(row.logsTruncated).toBe(true);
    expect(row.logs).toEqual(detail.body.logs);
    expect(row.result).toEqual(detail.body.result);
    expect(row).not.toHaveProperty('apiCalls');
    expect(row).not.toHaveProperty('storedParameters');
    // A list not filtered by job leaves them out.
    const unfiltered = await call('GET', `${base()}/function-runs?limit=100`, { token });
    const same = unfiltered.body.runs.find((r: Record<string, unknown>) => r['id'] === row.id);
    expect(same).toMatchObject({ jobId, status: 'succeeded' });
    expect(same).not.toHaveProperty('result');
    expect(same).not.toHaveProperty('logs');
  });

  it('filters the run list and refuses bad filters', async () => {
    const since = new Date(Date.now() - 60_000).toISOString();
    const listed = await call('GET', `${base()}/function-runs?status=succeeded&since=${since}&limit=2&page=1`, {
      token,
    });
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ page: 1, limit: 2, total: expect.any(Number) });
    expect(listed.body.runs.length).toBeLessThanOrEqual(2);
    for (const r of listed.body.runs) {
      expect(r.status).toBe('succeeded');
      expect(r).not.toHaveProperty('logs');
    }
    const inverted = await call(
      'GET',
      `${base()}/function-runs?since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z`,
      {
        token,
      },
    );
    expect(inverted.status).toBe(400);
    expect(inverted.body.details).toEqual([{ field: 'since', message: 'must not be after until' }]);
    for (const query of ['status=done', 'since=yesterday', 'jobId=x', 'limit=101', 'page=0']) {
      expect({ query, status: (await call('GET', `${base()}/function-runs?${query}`, { token })).status }).toEqual({
        query,
        status: 400,
      });
    }
  });
});

describe('the job pipeline', () => {
  it('keeps queued jobs while no worker runs, and runs them when one starts', async () => {
    await worker.stop();
    const job = await test('async function run() { return { success: true, data: "late" }; }');
    const queued = await call('GET', `${base()}/function-runs?jobId=${job}`, { token });
    expect(queued.body.runs[0].status).toBe('queued');
    worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
    expect(await finished(job)).toMatchObject({ status: 'succeeded', result: { data: 'late' } });
  });

  it('publishes again the job of a run left queued (its message lost), so the run still happens', async () => {
    await stack.restartCompute({ COMPUTE_REPUBLISH_AFTER_MS: '300' });
    await worker.stop();
    const job = await test('async function run() { return { success: true, data: "recovered" }; }');
    // Lose every job message, as a crash between the run's insert and its publish would.
    const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
    try {
      await (await jetstreamManager(nc)).streams.purge(`${stack.natsPrefix}_compute_jobs`);
    } finally {
      await nc.close();
    }
    worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
    expect(await finished(job)).toMatchObject({ status: 'succeeded', result: { data: 'recovered' } });
  });

  it('fails a run claimed first whose parameters cannot be opened, instead of handing its job back for ever', async () => {
    await worker.stop();
    const job = await test('async function run() { return { success: true }; }');
    const runId = (await call('GET', `${base()}/function-runs?jobId=${job}`, { token })).body.runs[0].id as string;
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      await db.query("UPDATE compute.runs SET params = 'not sealed' WHERE id = $1", [runId]);
    } finally {
      await db.end();
    }
    // Only a job without its run: the worker reads the row, and fails before the run has an isolate.
    const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
    try {
      await (await jetstreamManager(nc)).streams.purge(`${stack.natsPrefix}_compute_jobs`);
      await jetstream(nc).publish(
        computeJobSubject(stack.natsPrefix, ws),
        JSON.stringify({ runId, workspaceSlug: ws }),
        {
          msgID: `${runId}:id-only`,
        },
      );
    } finally {
      await nc.close();
    }
    worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
    expect(await finished(job)).toMatchObject({
      status: 'failed',
      error: { name: 'PlatformError', message: 'The platform could not execute this run.' },
    });
    await eventually(async () => ((await jobsHeld()) === 0 ? true : undefined), 30_000);
  });

  it('publishes again a lost job among jobs that are only waiting', async () => {
    await stack.restartCompute({ COMPUTE_REPUBLISH_AFTER_MS: '300' });
    await worker.stop();
    const waiting = await test('async function run() { return { success: true, data: "waiting" }; }');
    const lost = await test('async function run() { return { success: true, data: "lost" }; }');
    const waitingRun = (await call('GET', `${base()}/function-runs?jobId=${waiting}`, { token })).body.runs[0].id;
    // The second run's job is lost; the first one's is still in the queue (sent again as the sweep sends it).
    const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
    try {
      await (await jetstreamManager(nc)).streams.purge(`${stack.natsPrefix}_compute_jobs`);
      await jetstream(nc).publish(
        computeJobSubject(stack.natsPrefix, ws),
        JSON.stringify({ runId: waitingRun, workspaceSlug: ws }),
        { msgID: `${waitingRun}:kept` },
      );
    } finally {
      await nc.close();
    }
    worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
    expect(await finished(waiting)).toMatchObject({ status: 'succeeded', result: { data: 'waiting' } });
    expect(await finished(lost)).toMatchObject({ status: 'succeeded', result: { data: 'lost' } });
  });

  it('fails a run whose worker died mid-run once its lease expires, and another worker serves on', async () => {
    const { holder, job } = await aWorkerHoldingARunThatNeverEnds();
    await holder.stop('SIGKILL');
    await expectLostAndServedOn(job);
  });
});

/**
 * A job carries its run, and a worker executes it before claiming it: the claim
 * comes at the run's first platform call or after COMPUTE_CLAIM_AFTER_MS (5 s
 * here, so the run below stays unclaimed while the test acts on it).
 */
describe('a run executed before its claim', () => {
  /** Jobs a worker has taken and not acknowledged (a run it executes unclaimed). */
  const statusOf = async (job: string) =>
    (await call('GET', `${base()}/function-runs?jobId=${job}`, { token })).body.runs[0]?.status as string;

  /** A collection of one property, created for the test. */
  async function collection(recordSlug: string, property: { name: string; type: string }): Promise<string> {
    const created = await call('POST', `${base()}/structures`, {
      token,
      body: { name: recordSlug, recordSlug, properties: [property] },
    });
    expect(created.status).toBeLessThan(300);
    return created.body.id as string;
  }

  /** A function with an on-demand trigger: its id, and `execute(body)` answering the job id. */
  async function onDemand(name: string, code: string) {
    const fn = await call('POST', `${base()}/compute-functions`, { token, body: { name, code } });
    expect(fn.status).toBe(201);
    const trigger = await call('POST', `${base()}/function-triggers`, {
      token,
      body: { functionId: fn.body.id, name: `${name}-now`, executionType: 'on-demand' },
    });
    expect(trigger.status).toBe(201);
    const execute = async (body: Record<string, unknown> = {}) => {
      const executed = await call('POST', `${base()}/function-triggers/${trigger.body.id}/execute`, { token, body });
      expect(executed.status).toBe(200);
      return executed.body as string;
    };
    return { id: fn.body.id as string, execute };
  }

  it('runs again on another worker when its worker dies before claiming it, instead of failing as WorkerLost', async () => {
    const holder = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '1', COMPUTE_CLAIM_AFTER_MS: '5000' });
    await worker.stop();
    const job = await test(
      `async function run() { await new Promise((r) => setTimeout(r, 2500)); return { success: true, data: 'again' }; }`,
    );
    await eventually(async () => ((await jobsHeld()) === 1 ? true : undefined), 30_000);
    expect(await statusOf(job)).toBe('queued');
    await holder.stop('SIGKILL');
    // The job comes back once its acknowledgement is overdue (10 s), and the next worker claims it first.
    worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
    expect(await finished(job)).toMatchObject({ status: 'succeeded', result: { data: 'again' } });
  });

  it('makes no platform call and records nothing once its function is deleted under it', async () => {
    const notes = await collection('claim-notes', { name: 'text', type: 'string' });
    const fn = await onDemand(
      'writes-late',
      `async function run() {
        await new Promise((r) => setTimeout(r, 2000));
        await api.createRecord('claim-notes', { text: 'late' });
        return { success: true };
      }`,
    );
    const holder = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '1', COMPUTE_CLAIM_AFTER_MS: '5000' });
    await worker.stop();
    const job = await fn.execute();
    await eventually(async () => ((await jobsHeld()) === 1 ? true : undefined), 30_000);

    expect((await call('DELETE', `${base()}/compute-functions/${fn.id}`, { token })).status).toBe(200);
    // The worker ends the run (its createRecord refused: the run is not queued any more) and lets its job go.
    await eventually(async () => ((await jobsHeld()) === 0 ? true : undefined), 30_000);
    expect(await finished(job)).toMatchObject({
      status: 'cancelled',
      error: { name: 'Cancelled', message: 'The function was deleted.' },
    });
    const list = await call('GET', `${base()}/records?structureId=${notes}`, { token });
    expect(list.status).toBe(200);
    expect(list.body.results).toEqual([]);
    await holder.stop();
    worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
  });

  it('is stopped when its claim finds it cancelled: a deleted function does not keep the isolate', async () => {
    // Limits far beyond the deadlines below: only the stop can free the isolate from the hanging run.
    await stack.restartCompute({ COMPUTE_WALL_MS: '120000', COMPUTE_CPU_MS: '120000' });
    const gates = await collection('claim-gates', { name: 'open', type: 'boolean' });
    const fn = await onDemand(
      'hangs-on-demand',
      // A timer far beyond the limits keeps the run waiting (a promise with nothing pending would end at once).
      'async function run() { if (executionParams.hang) await new Promise((r) => setTimeout(r, 1e9)); return { success: true }; }',
    );
    // One isolate, claims after the default 50 ms. The function runs once: the worker keeps its code.
    const holder = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '1' });
    await worker.stop();
    expect(await finished(await fn.execute())).toMatchObject({ status: 'succeeded' });

    // A run that holds the isolate until a gate record exists, and one more the worker takes in
    // hand (it holds two jobs per isolate): the next job waits in the stream.
    const blocker = await test(`async function run() {
      for (;;) {
        const gates = await api.queryRecords('claim-gates', {});
        if (gates.data.length > 0) return { success: true };
        await new Promise((r) => setTimeout(r, 50));
      }
    }`);
    const inHand = await test('async function run() { return { success: true }; }');
    const hanging = await fn.execute({ hang: true });
    expect((await call('DELETE', `${base()}/compute-functions/${fn.id}`, { token })).status).toBe(200);
    const next = await test('async function run() { return { success: true, data: "next" }; }');
    expect(await statusOf(hanging)).toBe('cancelled');

    const opened = await call('POST', `${base()}/records`, {
      token,
      body: { structureId: gates, data: { open: true } },
    });
    expect(opened.status).toBe(201);
    for (const job of [blocker, inHand]) expect((await finished(job)).status).toBe('succeeded');
    // The cancelled run starts from the code the worker kept, its claim is refused, and it is stopped.
    expect(await finished(next)).toMatchObject({ status: 'succeeded', result: { data: 'next' } });
    expect(await finished(hanging)).toMatchObject({ status: 'cancelled', startedAt: null });
    await holder.stop();
    await stack.restartCompute();
    worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
  });

  it.each([
    ['a job that carries its run', 'carried', {}],
    ['a job claimed before it runs', 'claimed', { COMPUTE_CLAIM_AFTER_MS: '0' }],
  ])(
    'leaves a run waiting for an isolate queued, so deleting its function cancels it before any of its code runs (%s)',
    async (_case, name, env) => {
      const notes = await collection(`wait-notes-${name}`, { name: 'text', type: 'string' });
      const gates = await collection(`wait-gates-${name}`, { name: 'open', type: 'boolean' });
      const fn = await onDemand(
        `waits-for-isolate-${name}`,
        `async function run() { await api.createRecord('wait-notes-${name}', { text: 'ran' }); return { success: true }; }`,
      );
      const holder = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '1', ...env });
      await worker.stop();
      const blocker = await test(`async function run() {
      for (;;) {
        const gates = await api.queryRecords('wait-gates-${name}', {});
        if (gates.data.length > 0) return { success: true };
        await new Promise((r) => setTimeout(r, 50));
      }
    }`);
      await eventually(async () => ((await statusOf(blocker)) === 'running' ? true : undefined), 30_000);
      const waiting = await fn.execute();
      // The second job in the worker's hands too (held, not acknowledged), waiting for the isolate far
      // longer than a claim's 50 ms: it is still queued (it was claimed, running, before it had an isolate).
      await eventually(async () => ((await jobsHeld()) === 1 ? true : undefined), 30_000);
      const since = Date.now();
      await eventually(() => (Date.now() > since + 500 ? true : undefined), 5_000, 50);
      expect(await statusOf(waiting)).toBe('queued');
      expect((await call('DELETE', `${base()}/compute-functions/${fn.id}`, { token })).status).toBe(200);
      expect(await statusOf(waiting)).toBe('cancelled');

      const opened = await call('POST', `${base()}/records`, {
        token,
        body: { structureId: gates, data: { open: true } },
      });
      expect(opened.status).toBe(201);
      expect((await finished(blocker)).status).toBe('succeeded');
      await eventually(async () => ((await jobsHeld()) === 0 ? true : undefined), 30_000);
      expect(await finished(waiting)).toMatchObject({ status: 'cancelled', startedAt: null });
      const list = await call('GET', `${base()}/records?structureId=${notes}`, { token });
      expect(list.body.results).toEqual([]);
      await holder.stop();
      worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
    },
  );

  it('records the execution whose effects exist when a second delivery of its job claims it on the same worker', async () => {
    // A job past its ack deadline is delivered again, and the sweep re-publishes a run left queued:
    // either can reach the worker still executing the first delivery before its claim. Here the
    // second is a job without its run (as the sweep sends), claimed at once by the same worker.
    const notes = await collection('twice-notes', { name: 'text', type: 'string' });
    // Both executions at once on the worker's two isolates: the workspace may hold both here.
    const holder = await stack.startWorker({
      COMPUTE_WORKER_ISOLATES: '2',
      COMPUTE_WORKSPACE_ISOLATES: '2',
      COMPUTE_CLAIM_AFTER_MS: '5000',
    });
    await worker.stop();
    // The first execution starts before `after` and only computes; the second starts after it and writes.
    const after = Date.now() + 500;
    const job = await test(
      `async function run() {
        const started = Date.now();
        await new Promise((r) => setTimeout(r, 2000));
        if (started < executionParams.after) return { success: true, data: 'computed only' };
        await api.createRecord('twice-notes', { text: 'written' });
        return { success: true, data: 'wrote' };
      }`,
      { after },
    );
    await eventually(async () => ((await jobsHeld()) === 1 ? true : undefined), 30_000);
    await eventually(() => (Date.now() > after + 50 ? true : undefined), 5_000, 20);
    const runId = (await call('GET', `${base()}/function-runs?jobId=${job}`, { token })).body.runs[0].id as string;
    const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
    try {
      await jetstream(nc).publish(
        computeJobSubject(stack.natsPrefix, ws),
        JSON.stringify({ runId, workspaceSlug: ws }),
        { msgID: `${runId}:again` },
      );
    } finally {
      await nc.close();
    }

    const ended = await finished(job);
    // The record the second execution writes (before its end under the fix; just after the first's end before it).
    await eventually(async () => {
      const list = await call('GET', `${base()}/records?structureId=${notes}`, { token });
      return list.body.results.length > 0 ? true : undefined;
    }, 30_000);
    expect((await call('GET', `${base()}/records?structureId=${notes}`, { token })).body.results).toHaveLength(1);
    // Before 2026-11-26 the first execution's outcome was written onto the second's claim.
    expect(ended).toMatchObject({ status: 'succeeded', result: { data: 'wrote' } });
    expect(ended.apiCalls).toEqual([expect.objectContaining({ method: 'createRecord', ok: true })]);
    expect(Date.parse(ended.finishedAt)).toBeGreaterThanOrEqual(Date.parse(ended.startedAt));
    await holder.stop();
    worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
  });

  it('is claimed at its first platform call: it shows running while it waits after that call', async () => {
    const holder = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '1', COMPUTE_CLAIM_AFTER_MS: '5000' });
    await worker.stop();
    const job = await test(`async function run() {
      await api.queryRecords('no-such-collection', {}).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 2000));
      return { success: true, data: 'claimed' };
    }`);
    // Unclaimed, it would stay queued until it ended, two seconds later (the suite's wall-clock limit is 3 s).
    await eventually(async () => {
      const status = await statusOf(job);
      if (status !== 'queued' && status !== 'running') throw new Error(`ended before it was seen running: ${status}`);
      return status === 'running' ? true : undefined;
    }, 30_000);
    expect(await finished(job)).toMatchObject({ status: 'succeeded', result: { data: 'claimed' } });
    await holder.stop();
    worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
  });
});

describe('a worker asked to stop', () => {
  it('exits once COMPUTE_WORKER_STOP_MS has passed, its unfinished run failed through its lease', async () => {
    // Only the stop's deadline can end this worker before the run's two minutes.
    const { holder, job } = await aWorkerHoldingARunThatNeverEnds({ COMPUTE_WORKER_STOP_MS: '500' });
    await holder.stop('SIGTERM');
    await expectLostAndServedOn(job);
  });
});

describe('a worker asked to stop with a run waiting for an isolate', () => {
  it('finishes the run under way and hands the waiting one back to the queue for the next worker', async () => {
    // One isolate, and a stop deadline shorter than the two runs one after the other: before, the
    // stopping worker started the waiting run too, was cut off by its deadline, and lost it.
    const holder = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '1', COMPUTE_WORKER_STOP_MS: '3000' });
    await worker.stop();
    const nap = (label: string) =>
      test(
        `async function run() { await new Promise((r) => setTimeout(r, 2000)); return { success: true, data: '${label}' }; }`,
      );
    const statusOf = async (job: string) =>
      (await call('GET', `${base()}/function-runs?jobId=${job}`, { token })).body.runs[0]?.status as string;
    const underWay = await nap('under way');
    await eventually(async () => ((await statusOf(underWay)) === 'running' ? true : undefined), 30_000);
    // Taken by the worker while its one isolate is busy: held, still queued (claimed only once it runs).
    const waiting = await nap('waiting');
    await eventually(async () => ((await jobsHeld()) === 1 ? true : undefined), 30_000);
    expect(await statusOf(waiting)).toBe('queued');

    await holder.stop('SIGTERM');
    expect(await holder.exited).toEqual({ code: null, signal: 'SIGTERM' });
    expect(await finished(underWay)).toMatchObject({ status: 'succeeded', result: { data: 'under way' } });
    expect(await statusOf(waiting)).toBe('queued');
    worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
    expect(await finished(waiting)).toMatchObject({ status: 'succeeded', result: { data: 'waiting' } });
  });
});

describe('a memory bomb that V8 cannot stop at the limit', () => {
  it('ends its run as out of memory, lets the other runs finish, and only its sandbox process is replaced', async () => {
    // A Map grown without end: V8 runs out of memory outside the limit's reach, and isolated-vm
    // loses the isolate (its thread stays in V8's out-of-memory handler). Before 2026-11-26 the
    // worker aborted at once and every run on it was lost; until 2026-11-29 it stopped once its
    // other runs were done. Here both runs share one sandbox process (two isolates each, the
    // workspace may hold both): the slow one finishes on the process that lost the bomb's isolate.
    const holder = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2', COMPUTE_WORKSPACE_ISOLATES: '2' });
    let holderExited = false;
    void holder.exited.then(() => (holderExited = true));
    await worker.stop();
    const slow = await test(
      'async function run() { await new Promise((r) => setTimeout(r, 1500)); return { success: true, data: "finished" }; }',
    );
    await eventually(async () => {
      const listed = await call('GET', `${base()}/function-runs?jobId=${slow}`, { token });
      return listed.body.runs[0]?.status === 'running' ? true : undefined;
    }, 30_000);
    const bomb = await test(
      'async function run() { api.log("growing"); const m = new Map(); for (let i = 0; ; i++) m.set(i, [i, i, i]); }',
    );

    expect(await finished(bomb)).toMatchObject({
      status: 'failed',
      error: { name: 'MemoryLimitExceeded' },
      logs: [expect.objectContaining({ message: 'growing' })],
    });
    expect(await finished(slow)).toMatchObject({ status: 'succeeded', result: { data: 'finished' } });
    // The same worker serves on, on a new sandbox process.
    expect((await run('async function run() { return { success: true, data: "next" }; }')).result.data).toBe('next');
    expect(holderExited).toBe(false);
    worker = holder;
  });
});

/**
 * The suite's worker stopped and a worker of its own (`env` on top) holding a
 * run that waits on a timer under a two-minute limit: only the worker's end can
 * end it, and its lease (1.5 s) then fails it.
 */
async function aWorkerHoldingARunThatNeverEnds(
  env: Record<string, string> = {},
): Promise<{ holder: WorkerProcess; job: string }> {
  await stack.restartCompute({ COMPUTE_WALL_MS: '120000', COMPUTE_CPU_MS: '120000' });
  const holder = await stack.startWorker({ COMPUTE_LEASE_MS: '1500', COMPUTE_WORKER_ISOLATES: '1', ...env });
  await worker.stop();
  const job = await test('async function run() { await new Promise((resolve) => setTimeout(resolve, 1e9)); }');
  await eventually(async () => {
    const listed = await call('GET', `${base()}/function-runs?jobId=${job}`, { token });
    return listed.body.runs[0]?.status === 'running' ? true : undefined;
  }, 30_000);
  return { holder, job };
}

/** The run of a lost worker is failed as WorkerLost, and a new worker serves the next run. */
async function expectLostAndServedOn(job: string): Promise<void> {
  expect(await finished(job)).toMatchObject({ status: 'failed', error: { name: 'WorkerLost' } });
  worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
  expect((await run('async function run() { return { success: true }; }')).status).toBe('succeeded');
}

describe('function runs started for orchestration steps', () => {
  it('starts one run per job id: a start asked again answers the run the first one started', async () => {
    const fn = await call('POST', `${base()}/compute-functions`, {
      token,
      body: { name: 'step-once', code: 'async function run() { return { success: true, data: executionParams.n }; }' },
    });
    expect(fn.status).toBe(201);
    const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
    try {
      const start = async (jobId: string | undefined, n: number) =>
        (
          await nc.request(
            functionRunStartSubject(stack.natsPrefix),
            JSON.stringify({
              workspaceSlug: ws,
              functionId: fn.body.id,
              executionParams: { n },
              timeoutMs: 5000,
              origin: { runId: 'orun_test', stepId: 'once', attempt: 1 },
              ...(jobId ? { jobId } : {}),
            }),
            { timeout: 5000 },
          )
        ).json<{ started: boolean; runId: string; jobId: string }>();
      const jobId = '53fea88f-2a61-5583-8c55-9928b26cb978';
      // The first start, and the same start again (its answer lost, its claim rolled back), even at once.
      const [first, again] = await Promise.all([start(jobId, 1), start(jobId, 2)]);
      const later = await start(jobId, 3);
      expect(first).toMatchObject({ started: true, jobId });
      expect([again.runId, later.runId]).toEqual([first.runId, first.runId]);
      const listed = await call('GET', `${base()}/function-runs?jobId=${jobId}`, { token });
      expect(listed.body.runs).toHaveLength(1);
      // Without a job id every start is a run of its own; a job id that is not a UUID is refused.
      const [a, b] = [await start(undefined, 4), await start(undefined, 5)];
      expect(a.runId).not.toBe(b.runId);
      expect(await start('not-a-uuid', 6)).toEqual({ started: false, reason: 'The job id is not a UUID.' });
    } finally {
      await nc.close();
    }
  });
});
