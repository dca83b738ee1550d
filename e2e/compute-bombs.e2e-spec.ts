import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack, type WorkerProcess } from '@strata/testkit';

/**
 * One tenant's memory bombs cannot take the worker down under another tenant's
 * runs (docs/sandbox.md, "Sandbox processes"): at the default limits (64 MB,
 * 10 s of CPU), a burst of the three bombs that make isolated-vm lose its
 * isolate, each written two ways (so the refusal by code hash does not
 * stop them), runs in one workspace while another workspace's ordinary runs
 * go on in the same worker. Before sandbox processes the first loss stopped
 * the worker, and every run on it went with it.
 */
let stack: Stack;
let worker: WorkerProcess;
let workerExited = false;
const suffix = Date.now().toString(36);
const attacker = `bombs-${suffix}`;
const tenant = `bystander-${suffix}`;
let attackerToken: string;
let tenantToken: string;

beforeAll(async () => {
  stack = await startStack();
  worker = await stack.startWorker();
  void worker.exited.then(() => (workerExited = true));
  attackerToken = await adminWorkspaceToken(stack, attacker);
  tenantToken = await adminWorkspaceToken(stack, tenant);
});

afterAll(async () => {
  await stack?.stop();
});

const base = (workspace: string) => `${stack.baseUrl}/data/workspace/${workspace}/api/v1`;
const FINAL = ['succeeded', 'failed', 'timed_out', 'cancelled'];

/** The three bombs; `tag` makes each copy other code (another functionCodeHash). */
const BOMBS = [
  (tag: string) => `async function run() { /* ${tag} */ const o = {}; for (let i = 0; ; i++) o['k' + i] = i; }`,
  (tag: string) => `async function run() { /* ${tag} */ new Array(1e8).fill(1); return { success: true }; }`,
  (tag: string) =>
    `async function run() { /* ${tag} */ return { success: true, data: 'ab'.repeat(1.5e7).replaceAll('a', 'xyz').length }; }`,
];

const ORDINARY = `async function run() {
  await new Promise((resolve) => setTimeout(resolve, 50));
  const mac = await api.hmacSha256('key', String(executionParams.n));
  return { success: true, data: { n: executionParams.n, mac: typeof mac } };
}`;

async function post(workspace: string, bearer: string, code: string, params: Record<string, unknown> = {}) {
  const queued = await call('POST', `${base(workspace)}/compute-functions/test`, {
    token: bearer,
    body: { code, params },
  });
  expect({ status: queued.status, body: queued.body }).toMatchObject({ status: 200 });
  return queued.body.jobId as string;
}

/** The run of a job once it is final (polled with a deadline; no timing is asserted). */
async function finished(workspace: string, bearer: string, jobId: string): Promise<Record<string, any>> {
  return eventually(
    async () => {
      const listed = await call('GET', `${base(workspace)}/function-runs?jobId=${jobId}`, { token: bearer });
      const run = listed.body.runs?.[0];
      if (!run || !FINAL.includes(run.status)) return undefined;
      return (await call('GET', `${base(workspace)}/function-runs/${run.id}`, { token: bearer })).body;
    },
    240_000,
    250,
  );
}

describe('a burst of memory bombs in one workspace', () => {
  it('fails the bombs with a clear error while another workspace’s runs on the same worker all succeed', async () => {
    // Interleaved: the bystander's runs are queued among the bombs, on the worker's same four isolates.
    const bombJobs: Promise<string>[] = [];
    const ordinaryJobs: Promise<string>[] = [];
    for (let copy = 0; copy < 2; copy++) {
      for (const [kind, bomb] of BOMBS.entries()) {
        bombJobs.push(post(attacker, attackerToken, bomb(`copy ${copy} of bomb ${kind}`)));
        ordinaryJobs.push(post(tenant, tenantToken, ORDINARY, { n: ordinaryJobs.length }));
        ordinaryJobs.push(post(tenant, tenantToken, ORDINARY, { n: ordinaryJobs.length }));
      }
    }
    const ordinary = await Promise.all(
      (await Promise.all(ordinaryJobs)).map((job) => finished(tenant, tenantToken, job)),
    );
    const bombs = await Promise.all((await Promise.all(bombJobs)).map((job) => finished(attacker, attackerToken, job)));

    // Every ordinary run succeeded with its own answer: none was lost with a bomb's process.
    expect(ordinary.map((run) => ({ status: run.status, error: run.error }))).toEqual(
      ordinary.map(() => ({ status: 'succeeded', error: null })),
    );
    expect(ordinary.map((run) => run.result.data.n).sort((a: number, b: number) => a - b)).toEqual(
      ordinary.map((_run, n) => n),
    );

    // Every bomb ended without succeeding, saying why: its memory, its time, or the refusal of its workspace.
    for (const run of bombs) {
      expect(['failed', 'timed_out']).toContain(run.status);
      expect(['MemoryLimitExceeded', 'TimeoutError', 'ExecutionsSuspended']).toContain(run.error?.name);
      expect(run.error.message).toEqual(expect.any(String));
    }
    expect(bombs.some((run) => run.error.name === 'MemoryLimitExceeded')).toBe(true);

    // After its first loss the workspace ran one bomb at a time: no two of its later runs overlapped.
    const ran = bombs.filter((run) => run.error.name !== 'ExecutionsSuspended');
    const firstLoss = Math.min(
      ...ran.filter((run) => run.error.name === 'MemoryLimitExceeded').map((run) => Date.parse(run.finishedAt)),
    );
    const later = ran
      .filter((run) => Date.parse(run.startedAt) > firstLoss)
      .sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt));
    for (let i = 1; i < later.length; i++) {
      expect(Date.parse(later[i]!.startedAt)).toBeGreaterThanOrEqual(Date.parse(later[i - 1]!.finishedAt));
    }

    // The worker never stopped, and serves the bystander on.
    expect(workerExited).toBe(false);
    const after = await finished(tenant, tenantToken, await post(tenant, tenantToken, ORDINARY, { n: 99 }));
    expect(after).toMatchObject({ status: 'succeeded', result: { data: { n: 99 } } });
  }, 300_000);
});
