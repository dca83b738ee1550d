import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually, freePort } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack, type WorkerProcess } from '@strata/testkit';

/**
 * Endpoint calls beyond a worker's isolates wait in its queue (docs/compute.md,
 * "When every isolate is busy"): bounded in all and per workspace, served
 * round-robin across workspaces, refused 503 with Retry-After past the limits,
 * and dropped unrun when their caller goes away. Through the gateway, as
 * callers reach them.
 *
 * The worker behind the gateway has three isolates a workspace may all hold
 * (two endpoint, one background), and a queue of six calls, five of one
 * workspace, with a wait long enough that only the limits refuse a call.
 */
let stack: Stack;
let worker: WorkerProcess;
let metricsUrl: string;
const suffix = Date.now().toString(36);
const ws = `burst-${suffix}`;
const otherWs = `burst-other-${suffix}`;
const tokens: Record<string, string> = {};

const base = (workspace: string) => `${stack.baseUrl}/data/workspace/${workspace}/api/v1`;
const endpoint = (path: string, workspace = ws) => `${base(workspace)}/endpoints/${path}`;

const CODE = {
  // Answers when its run started (the isolate's clock) and which call it was.
  stamp: `export default async (context) => {
    const at = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    return { at, n: context.req.payload.n };
  };`,
  nap: `export default async () => { await new Promise((resolve) => setTimeout(resolve, 2000)); return 'rested'; };`,
  nap2: `export default async () => { await new Promise((resolve) => setTimeout(resolve, 5000)); return 'rested'; };`,
  marker: `export default async () => 'ran';`,
};

async function endpointOf(workspace: string, name: keyof typeof CODE) {
  const token = tokens[workspace]!;
  const fn = await call('POST', `${base(workspace)}/compute-functions`, {
    token,
    body: { name, code: CODE[name] },
  });
  expect(fn.status).toBe(201);
  const trigger = await call('POST', `${base(workspace)}/function-triggers`, {
    token,
    body: {
      name,
      functionId: fn.body.id,
      executionType: 'endpoint',
      triggerMetadata: { path: name, auth: { mode: 'public' }, timeoutMs: 10_000 },
    },
  });
  expect(trigger.status).toBe(201);
  return trigger.body.id as string;
}

const runsOf = async (workspace: string, triggerId: string) =>
  (await call('GET', `${base(workspace)}/function-runs?triggerId=${triggerId}`, { token: tokens[workspace]! })).body
    .runs as { status: string }[];

/** Calls waiting in the worker for an isolate, as its metrics report them. */
async function waiting(): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('strata_compute_endpoint_waiting '));
  return Number(line?.split(' ')[1] ?? NaN);
}

/** Until exactly `n` calls wait in the worker. */
const waitingIs = (n: number) =>
  eventually(async () => {
    const now = await waiting();
    if (now !== n) throw new Error(`${now} calls waiting, not ${n}`);
    return true;
  }, 20_000);

beforeAll(async () => {
  stack = await startStack();
  const port = await freePort();
  metricsUrl = `http://127.0.0.1:${port}`;
  worker = await stack.startWorker({
    METRICS_PORT: String(port),
    COMPUTE_WORKER_ISOLATES: '1',
    COMPUTE_WORKER_ENDPOINT_ISOLATES: '2',
    COMPUTE_WORKSPACE_ISOLATES: '3',
    COMPUTE_ENDPOINT_QUEUE_MAX: '6',
    COMPUTE_ENDPOINT_QUEUE_WORKSPACE_MAX: '5',
    COMPUTE_ENDPOINT_QUEUE_WAIT_MS: '60000',
  });
  expect(worker.url).toBe(stack.workerUrl);
  tokens[ws] = await adminWorkspaceToken(stack, ws);
  tokens[otherWs] = await adminWorkspaceToken(stack, otherWs);
}, 180_000);

afterAll(async () => {
  await worker?.stop();
  await stack?.stop();
});

describe('endpoint calls when every isolate is busy', () => {
  it('a burst beyond the isolates waits and completes without a 503', async () => {
    await endpointOf(ws, 'stamp');
    // Three isolates and five places in the queue: eight calls at once.
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, n) => call('POST', endpoint('stamp'), { body: { n } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(answers.map((a) => a.body.n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(await waiting()).toBe(0);
  });

  it('past the queue’s limit a call is refused 503 with Retry-After, and nothing of it runs', async () => {
    const trigger = await endpointOf(ws, 'nap');
    // Three run, five wait (the workspace's limit), the rest are refused at once.
    const answers = await Promise.all(Array.from({ length: 10 }, () => call('POST', endpoint('nap'), { body: {} })));
    const refused = answers.filter((a) => a.status === 503);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const answer of refused) {
      expect(answer.headers.get('retry-after')).toBe('1');
      expect(answer.headers.get('x-strata-run-id')).toBeNull();
      expect(answer.body).toEqual({ error: expect.stringContaining('not queued'), statusCode: 503 });
    }
    const served = answers.filter((a) => a.status !== 503);
    expect(served.length).toBeGreaterThanOrEqual(8);
    expect(served.every((a) => a.status === 200 && a.body === 'rested')).toBe(true);
    // A refused call is not a run: only the served ones are recorded.
    expect(await runsOf(ws, trigger)).toHaveLength(served.length);
  });

  it('serves another workspace’s call before one workspace’s flood drains (round-robin)', async () => {
    await endpointOf(otherWs, 'stamp');
    // The flood takes the three isolates, and five of its calls wait.
    const flood = Array.from({ length: 8 }, (_, n) => call('POST', endpoint('stamp'), { body: { n } }));
    await waitingIs(5);
    // It waits too: each isolate that frees goes to a waiting call.
    const other = call('POST', endpoint('stamp', otherWs), { body: { n: 100 } });
    const [otherAnswer, ...floodAnswers] = await Promise.all([other, ...flood]);
    expect(otherAnswer.status).toBe(200);
    expect(floodAnswers.map((a) => a.status)).toEqual(Array(8).fill(200));
    // First come first within the flood; the other workspace's call, last to come, was not served last:
    // with the flood's oldest waiting call served, its turn came next, ahead of most of the flood.
    const startedAfterOther = floodAnswers.filter((a) => a.body.at > otherAnswer.body.at).length;
    expect(startedAfterOther).toBeGreaterThanOrEqual(3);
  });

  it('drops a waiting call whose caller went away: it never runs', async () => {
    const marker = await endpointOf(ws, 'marker');
    const nap = await endpointOf(ws, 'nap2');
    // The three isolates busy: each nap's run is recorded as it starts.
    const naps = Array.from({ length: 3 }, () => call('POST', endpoint('nap2'), { body: {} }));
    await eventually(async () => ((await runsOf(ws, nap)).length === 3 ? true : undefined), 20_000);
    const gone = new AbortController();
    const abandoned = fetch(endpoint('marker'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      signal: gone.signal,
    }).catch((err: unknown) => err);
    await waitingIs(1);
    gone.abort();
    await abandoned;
    await waitingIs(0);
    expect((await Promise.all(naps)).map((a) => a.status)).toEqual([200, 200, 200]);
    // Called again, it runs: the abandoned call, ahead of it in the queue had it stayed, did not.
    const again = await call('POST', endpoint('marker'), { body: {} });
    expect(again.status).toBe(200);
    expect(again.body).toBe('ran');
    expect(await runsOf(ws, marker)).toHaveLength(1);
  });
});
