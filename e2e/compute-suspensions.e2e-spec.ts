import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '@strata/testing';
import { loginWithPassword } from '@strata/sdk';
import { adminWorkspaceToken, call, startStack, type Stack, type WorkerProcess } from '@strata/testkit';

/**
 * Code that makes the sandbox lose an isolate (each loss costs a sandbox
 * process its other runs share) is refused for a while, and a workspace whose
 * runs keep doing it is suspended: docs/compute.md, "Suspended workspaces".
 * Here at its second loss (COMPUTE_SUSPEND_AFTER_LOST_ISOLATES=2). The worker
 * itself never stops for it: only the sandbox process that lost the isolate is replaced.
 */
let stack: Stack;
let worker: WorkerProcess;
const suffix = Date.now().toString(36);
const ws = `suspend-${suffix}`;
const otherWs = `suspend-other-${suffix}`;
let token: string;
let otherToken: string;
/** Set if the worker process ended: it must not, whatever its runs do. */
let workerExited = false;

beforeAll(async () => {
  stack = await startStack({
    COMPUTE_WALL_MS: '5000',
    COMPUTE_CPU_MS: '3000',
    COMPUTE_MEMORY_MB: '32',
    COMPUTE_SWEEP_INTERVAL_MS: '200',
    COMPUTE_SUSPEND_AFTER_LOST_ISOLATES: '2',
  });
  // One isolate: a run posted after the bomb waits for it in the worker.
  worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '1' });
  void worker.exited.then(() => (workerExited = true));
  token = await adminWorkspaceToken(stack, ws);
  otherToken = await adminWorkspaceToken(stack, otherWs);
});

afterAll(async () => {
  await stack?.stop();
});

const base = (workspace: string) => `${stack.baseUrl}/data/workspace/${workspace}/api/v1`;
const FINAL = ['succeeded', 'failed', 'timed_out', 'cancelled'];

async function test(workspace: string, bearer: string, code: string): Promise<string> {
  const queued = await call('POST', `${base(workspace)}/compute-functions/test`, {
    token: bearer,
    body: { code, params: {} },
  });
  // The body names a refusal (a 429's suspension or rate limit) if the status is not the one expected.
  expect({ status: queued.status, body: queued.body }).toMatchObject({ status: 200 });
  return queued.body.jobId as string;
}

/** The run of a job once it is final (polled with a deadline; no timing is asserted). */
async function finished(workspace: string, bearer: string, jobId: string): Promise<Record<string, any>> {
  return eventually(async () => {
    const listed = await call('GET', `${base(workspace)}/function-runs?jobId=${jobId}`, { token: bearer });
    const run = listed.body.runs?.[0];
    if (!run || !FINAL.includes(run.status)) return undefined;
    return (await call('GET', `${base(workspace)}/function-runs/${run.id}`, { token: bearer })).body;
  }, 60_000);
}

// A Map grown without end: growing its table needs one allocation past the heap, which V8 cannot
// stop at the limit; isolated-vm loses the isolate (every time at 32 MB, in under 3 s even on a
// loaded machine: an object's keys took as long as the CPU limit there, and sometimes ended on it).
const BOMB = 'async function run() { const m = new Map(); for (let i = 0; ; i++) m.set(i, [i, i, i]); }';
// The same, as other code (another functionCodeHash).
const OTHER_BOMB = 'async function run() { const seen = new Map(); for (let n = 0; ; n++) seen.set(n, [n, n, n, n]); }';

describe('runs that lose isolates', () => {
  it('refuse their code, then suspend their workspace: its runs and requests are refused, others run on', async () => {
    const saved = async (name: string, code: string) => {
      const created = await call('POST', `${base(ws)}/compute-functions`, { token, body: { name, code } });
      expect(created.status).toBe(201);
      return created.body.id as string;
    };
    const trigger = async (functionId: string, body: Record<string, unknown>) => {
      const created = await call('POST', `${base(ws)}/function-triggers`, { token, body: { functionId, ...body } });
      expect(created.status).toBe(201);
      return created.body.id as string;
    };
    const echo = await saved('echo', 'async function run() { return { success: true }; }');
    const onDemand = await trigger(echo, { name: 'by-hand', executionType: 'on-demand' });
    await trigger(echo, { name: 'inbound', executionType: 'http-trigger', triggerMetadata: { path: 'inbound' } });
    await trigger(await saved('hook', 'export default async () => ({ statusCode: 200, body: "hi" });'), {
      name: 'hook',
      executionType: 'endpoint',
      triggerMetadata: { path: 'hook', auth: { mode: 'public' } },
    });

    const WAITS = 'async function run() { api.log("ran"); return { success: true }; }';
    const first = await test(ws, token, BOMB);
    // Taken by the worker while the bomb has its one isolate.
    const waitedFirst = await test(ws, token, WAITS);
    expect(await finished(ws, token, first)).toMatchObject({
      status: 'failed',
      error: { name: 'MemoryLimitExceeded' },
    });
    // The run that waited runs on the sandbox process that replaced the lost one, in the same worker.
    expect(await finished(ws, token, waitedFirst)).toMatchObject({ status: 'succeeded', logs: [{ message: 'ran' }] });
    expect(workerExited).toBe(false);

    // One loss refuses that code only: run again, it fails at once without touching an isolate.
    const again = await finished(ws, token, await test(ws, token, BOMB));
    expect(again).toMatchObject({
      status: 'failed',
      error: {
        name: 'ExecutionsSuspended',
        message: expect.stringMatching(
          /^This code \(functionCodeHash [0-9a-f]{12}…\) made the sandbox lose an isolate/,
        ),
      },
      logs: [],
    });
    expect(Date.parse(again.finishedAt)).toBeGreaterThanOrEqual(Date.parse(again.startedAt));
    expect((await finished(ws, token, await test(ws, token, WAITS))).status).toBe('succeeded');

    // A second loss within the window, by other code, suspends the workspace.
    const bomb = await test(ws, token, OTHER_BOMB);
    const waiting = await test(ws, token, WAITS);
    expect(await finished(ws, token, bomb)).toMatchObject({ status: 'failed', error: { name: 'MemoryLimitExceeded' } });

    // The API refuses the workspace's new runs with 429, saying until when and why.
    const refused = await eventually(async () => {
      const r = await call('POST', `${base(ws)}/compute-functions/test`, {
        token,
        body: { code: 'async function run() { return { success: true }; }', params: {} },
      });
      return r.status === 429 ? r : undefined;
    }, 15_000);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: expect.stringMatching(
        /^Function runs of this workspace are suspended until \d{4}-\d\d-\d\dT[\d:.]+Z: its runs made the sandbox lose 2 isolates within 10 minutes/,
      ),
      statusCode: 429,
    });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(60);
    expect(retryAfter).toBeLessThanOrEqual(600);
    // A re-run is a run too.
    const bombRun = await finished(ws, token, bomb);
    const rerun = await call('POST', `${base(ws)}/function-runs/${bombRun.id}/rerun`, { token, body: {} });
    expect(rerun.status).toBe(429);

    // So is an execution of a trigger.
    expect((await call('POST', `${base(ws)}/function-triggers/${onDemand}/execute`, { token, body: {} })).status).toBe(
      429,
    );

    // Another workspace is not suspended, and the same worker serves it.
    const other = await test(otherWs, otherToken, 'async function run() { return { success: true, data: "other" }; }');
    expect(await finished(otherWs, otherToken, other)).toMatchObject({
      status: 'succeeded',
      result: { data: 'other' },
    });

    // An endpoint call, served by the worker, is refused the same way.
    const called = await call('POST', `${base(ws)}/endpoints/hook`, { body: { n: 1 } });
    expect(called.status).toBe(429);
    expect(called.body.error).toMatch(/^Function runs of this workspace are suspended until /);

    // A run started without a request (an inbound arrival, accepted with 202) is refused by the
    // worker, none of its code run, and it ends no earlier than it started.
    const arrival = await call('POST', `${base(ws)}/http-trigger/inbound`, { body: { n: 1 } });
    expect(arrival.status).toBe(202);
    const refusedRun = await finished(ws, token, arrival.body.executionId as string);
    expect(refusedRun).toMatchObject({ status: 'failed', error: { name: 'ExecutionsSuspended' }, logs: [] });
    expect(Date.parse(refusedRun.finishedAt)).toBeGreaterThanOrEqual(Date.parse(refusedRun.startedAt));

    // The run that waited behind the bomb was refused when it got the isolate, none of its code run:
    // the worker knew of the loss before the bomb's isolate was free again.
    expect(await finished(ws, token, waiting)).toMatchObject({
      status: 'failed',
      error: { name: 'ExecutionsSuspended', message: expect.stringContaining('suspended until') },
      logs: [],
    });
    expect(workerExited).toBe(false);
  }, 240_000);

  it('refuses an endpoint call of code that lost an isolate with 429, saying which code', async () => {
    // In the other workspace, which never lost one: the refusal is its code's, not a suspension.
    const created = await call('POST', `${base(otherWs)}/compute-functions`, {
      token: otherToken,
      body: {
        name: 'hook-bomb',
        code: `export default async () => { ${BOMB.slice('async function run() '.length)} };`,
      },
    });
    expect(created.status).toBe(201);
    const trigger = await call('POST', `${base(otherWs)}/function-triggers`, {
      token: otherToken,
      body: {
        name: 'hook-bomb',
        functionId: created.body.id,
        executionType: 'endpoint',
        triggerMetadata: { path: 'hook-bomb', auth: { mode: 'public' } },
      },
    });
    expect(trigger.status).toBe(201);
    const first = await call('POST', `${base(otherWs)}/endpoints/hook-bomb`, { body: {} });
    expect(first.status).toBe(500);
    // The worker refuses the run (the API cannot know a call's code before it runs): a 429 all the same.
    const again = await call('POST', `${base(otherWs)}/endpoints/hook-bomb`, { body: {} });
    expect(again.status).toBe(429);
    expect(again.body.error).toMatch(/^This code \(functionCodeHash [0-9a-f]{12}…\) made the sandbox lose an isolate/);
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThan(60);
    // The workspace's other code still runs.
    const fine = await test(otherWs, otherToken, 'async function run() { return { success: true, data: "fine" }; }');
    expect(await finished(otherWs, otherToken, fine)).toMatchObject({ status: 'succeeded', result: { data: 'fine' } });
    expect(workerExited).toBe(false);
  }, 240_000);

  it('count against the user who created the workspace: their other workspaces back off and are suspended too', async () => {
    await stack.createUser(`mallory-${suffix}@example.test`, 'mallory-password-1');
    const login = (workspace?: string) =>
      loginWithPassword({
        authUrl: stack.authUrl,
        email: `mallory-${suffix}@example.test`,
        password: 'mallory-password-1',
        ...(workspace ? { workspace } : {}),
      }).then((t) => t.accessToken);
    const unscoped = await login();
    const own: Record<string, string> = {};
    for (const name of ['one', 'two', 'three']) {
      const slug = `mallory-${name}-${suffix}`;
      const created = await call('POST', `${stack.baseUrl}/workspace/api/v1/workspaces`, {
        token: unscoped,
        body: { slug, name: slug },
      });
      expect(created.status).toBe(201);
      own[name] = slug;
    }
    const tokens = Object.fromEntries(
      await Promise.all(Object.entries(own).map(async ([name, slug]) => [name, await login(slug)] as const)),
    );

    // One loss in each of two workspaces: two for their creator, who reaches the threshold (2).
    const lost = (name: string, code: string) =>
      test(own[name]!, tokens[name]!, code).then((job) => finished(own[name]!, tokens[name]!, job));
    expect(await lost('one', `${BOMB} /* one */`)).toMatchObject({ error: { name: 'MemoryLimitExceeded' } });
    expect(await lost('two', `${OTHER_BOMB} /* two */`)).toMatchObject({ error: { name: 'MemoryLimitExceeded' } });

    // The third workspace lost nothing itself, and is refused for its creator: a new workspace is no fresh start.
    const refused = await finished(
      own['three']!,
      tokens['three']!,
      await test(own['three']!, tokens['three']!, 'async function run() { return { success: true }; }'),
    );
    expect(refused).toMatchObject({
      status: 'failed',
      error: {
        name: 'ExecutionsSuspended',
        message: expect.stringMatching(
          /^Function runs of the workspaces this workspace's creator created are suspended until /,
        ),
      },
      logs: [],
    });

    // Workspaces the administrator created for others are not the administrator's to lose.
    const fine = await test(otherWs, otherToken, 'async function run() { return { success: true, data: "fine" }; }');
    expect(await finished(otherWs, otherToken, fine)).toMatchObject({ status: 'succeeded' });
    expect(workerExited).toBe(false);
  }, 240_000);
});
