import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { computeJobsStream } from '@strata/contracts';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';
import { eventually } from '@strata/testing';

/**
 * One workspace's backlog does not hold up another's runs (docs/compute.md,
 * "Fair share"): a workspace with more than COMPUTE_BACKLOG_AFTER runs queued
 * has its next jobs put on the backlog queue, and a worker runs them only when
 * no other job waits for an isolate. Ordering is asserted, never timing.
 */
let stack: Stack;
const suffix = Date.now().toString(36);
const [heavy, light] = [`fair-heavy-${suffix}`, `fair-light-${suffix}`];
/** Workspaces of their own, never on the backlog queue: what keeps an isolate free there is the cap alone. */
const [holder, other] = [`cap-holder-${suffix}`, `cap-other-${suffix}`];
const tokens: Record<string, string> = {};
const BACKLOG_AFTER = 4;
const HEAVY_RUNS = 24;

beforeAll(async () => {
  stack = await startStack({
    COMPUTE_BACKLOG_AFTER: String(BACKLOG_AFTER),
    // Every heavy run is posted within the window, however long the POSTs take on a busy machine.
    COMPUTE_BACKLOG_WINDOW_MS: '600000',
    RATE_LIMIT_EXECUTE_PER_MINUTE: '1000',
  });
  for (const ws of [heavy, light, holder, other]) tokens[ws] = await adminWorkspaceToken(stack, ws);
});

afterAll(async () => {
  await stack?.stop();
});

const base = (ws: string) => `${stack.baseUrl}/data/workspace/${ws}/api/v1`;

async function test(ws: string, code: string): Promise<string> {
  const queued = await call('POST', `${base(ws)}/compute-functions/test`, {
    token: tokens[ws]!,
    body: { code, params: {} },
  });
  expect(queued.status).toBe(200);
  return queued.body.jobId as string;
}

function finishedRun(ws: string, jobId: string): Promise<{ status: string; finishedAt: string }> {
  return eventually(async () => {
    const listed = await call('GET', `${base(ws)}/function-runs?jobId=${jobId}`, { token: tokens[ws]! });
    const run = listed.body.runs[0];
    return run?.finishedAt ? (run as { status: string; finishedAt: string }) : undefined;
  }, 120_000);
}

async function jobsWaiting(): Promise<{ jobs: number; backlog: number }> {
  const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
  try {
    const jsm = await jetstreamManager(nc);
    const count = async (lane: 'jobs' | 'backlog') =>
      (await jsm.streams.info(computeJobsStream(stack.natsPrefix, lane).name)).state.messages;
    return { jobs: await count('jobs'), backlog: await count('backlog') };
  } finally {
    await nc.close();
  }
}

describe('fair share between workspaces', () => {
  it("runs another workspace's run ahead of one workspace's backlog", async () => {
    // No worker yet: every run waits, and the heavy workspace's queue grows past the limit.
    const busy =
      'async function run() { const end = Date.now() + 100; while (Date.now() < end) {} return { success: true }; }';
    const heavyJobs: string[] = [];
    for (let i = 0; i < HEAVY_RUNS; i++) heavyJobs.push(await test(heavy, busy));
    const lightJob = await test(light, 'async function run() { return { success: true, data: "light" }; }');
    // The heavy workspace's first runs went to the work queue, the rest to the backlog; the light one's to the queue.
    expect(await jobsWaiting()).toEqual({ jobs: BACKLOG_AFTER + 1, backlog: HEAVY_RUNS - BACKLOG_AFTER });

    await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '1' });
    const lightRun = await finishedRun(light, lightJob);
    const heavyRuns = await Promise.all(heavyJobs.map((job) => finishedRun(heavy, job)));
    expect(lightRun.status).toBe('succeeded');
    expect(heavyRuns.every((run) => run.status === 'succeeded')).toBe(true);
    // First in, first out, the light run would have finished last. Behind the heavy workspace's queued
    // jobs and at most the backlog jobs the worker had started before it took the light one, it is early.
    const finishedBefore = heavyRuns.filter((run) => run.finishedAt < lightRun.finishedAt).length;
    expect(finishedBefore).toBeLessThanOrEqual(BACKLOG_AFTER + 4);
  });

  it('keeps an isolate for other workspaces while one workspace’s runs wait on timers', async () => {
    // A worker of two isolates: one workspace may hold one of them (all but one), whatever its runs do.
    const worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
    const waiting =
      'async function run() { await new Promise((r) => setTimeout(r, 15000)); return { success: true }; }';
    const held = [await test(holder, waiting), await test(holder, waiting)];
    // The holder's first run has an isolate before the other workspace's run is posted.
    await eventually(async () => {
      const listed = await call('GET', `${base(holder)}/function-runs?jobId=${held[0]}`, { token: tokens[holder]! });
      return listed.body.runs[0]?.status === 'running' ? true : undefined;
    }, 30_000);
    const otherRun = await finishedRun(other, await test(other, 'async function run() { return { success: true }; }'));
    expect(otherRun.status).toBe('succeeded');
    // The other run did not wait for the holder's: none of them has ended yet (one runs, one waits).
    // With COMPUTE_WORKSPACE_ISOLATES=2 (no cap) both ran, and the other run ended after them.
    const statuses = await Promise.all(
      held.map(async (job) => {
        const listed = await call('GET', `${base(holder)}/function-runs?jobId=${job}`, { token: tokens[holder]! });
        return listed.body.runs[0]?.status as string;
      }),
    );
    expect(statuses.sort()).toEqual(['queued', 'running']);
    await worker.stop();
  });
});
