import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually, freePort } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack, type WorkerProcess } from '@strata/testkit';

/**
 * A worker's Prometheus metrics (docs/runbooks.md, "Metrics"), scraped as an
 * operator's Prometheus would: GET /metrics on METRICS_PORT.
 */
let stack: Stack;
let worker: WorkerProcess;
let metricsUrl: string;
let token: string;
const ws = `metrics-${Date.now().toString(36)}`;
const base = () => `${stack.baseUrl}/data/workspace/${ws}/api/v1`;

beforeAll(async () => {
  stack = await startStack();
  const port = await freePort();
  metricsUrl = `http://127.0.0.1:${port}`;
  worker = await stack.startWorker({ METRICS_PORT: String(port), COMPUTE_WORKER_ISOLATES: '2' });
  token = await adminWorkspaceToken(stack, ws);
});

afterAll(async () => {
  await worker?.stop();
  await stack?.stop();
});

/** One sample of the exposition: its labels as a map. */
interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

function parseExposition(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not an exposition line: ${line}`);
      const labels = Object.fromEntries(
        [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]),
      );
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

async function scrape(): Promise<Sample[]> {
  const res = await fetch(`${metricsUrl}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return parseExposition(await res.text());
}

/** The value of the one sample named `name` whose labels include `labels`; undefined when none. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value),
  );
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

async function testRun(code: string): Promise<string> {
  const posted = await call('POST', `${base()}/compute-functions/test`, { token, body: { code, params: {} } });
  expect(posted.status).toBe(200);
  return posted.body.jobId as string;
}

async function finalStatus(jobId: string): Promise<string> {
  return eventually(async () => {
    const listed = await call('GET', `${base()}/function-runs?jobId=${jobId}`, { token });
    const status = listed.body.runs[0]?.status as string | undefined;
    if (!status || status === 'queued' || status === 'running') throw new Error(`run of ${jobId}: ${status}`);
    return status;
  }, 60_000);
}

describe('worker metrics', () => {
  it('counts the runs it ended by status and source, with their durations, engines, queues and suspensions', async () => {
    const before = await scrape();
    expect(valueOf(before, 'strata_compute_runs_ended_total')).toBeUndefined();
    // Isolates are made as runs need them, up to COMPUTE_WORKER_ISOLATES.
    expect(valueOf(before, 'strata_compute_isolates', { engine: 'background' })).toBe(0);
    expect(valueOf(before, 'strata_compute_isolates_busy', { engine: 'background' })).toBe(0);
    expect(valueOf(before, 'strata_compute_workspaces_suspended')).toBe(0);
    expect(valueOf(before, 'strata_compute_jobs_pending', { lane: 'jobs' })).toBe(0);
    expect(valueOf(before, 'strata_compute_jobs_pending', { lane: 'backlog' })).toBe(0);

    const succeeded = await Promise.all(
      [0, 1, 2].map(() => testRun('async function run() { return { success: true }; }')),
    );
    const failed = await testRun('async function run() { throw new Error("no"); }');
    for (const jobId of succeeded) expect(await finalStatus(jobId)).toBe('succeeded');
    expect(await finalStatus(failed)).toBe('failed');

    // The count follows the write of the outcome, which the run's record shows first: scraped until it is there.
    const after = await eventually(async () => {
      const samples = await scrape();
      const ended = valueOf(samples, 'strata_compute_runs_ended_total', {
        status: 'succeeded',
        execution_source: 'manual',
      });
      if (ended !== 3) throw new Error(`succeeded runs counted: ${ended}`);
      return samples;
    }, 10_000);
    expect(valueOf(after, 'strata_compute_runs_ended_total', { status: 'failed', execution_source: 'manual' })).toBe(1);
    expect(valueOf(after, 'strata_compute_run_duration_seconds_count', { status: 'succeeded' })).toBe(3);
    expect(valueOf(after, 'strata_compute_run_duration_seconds_count', { status: 'failed' })).toBe(1);
    expect(valueOf(after, 'strata_compute_run_duration_seconds_bucket', { status: 'succeeded', le: '+Inf' })).toBe(3);
    expect(valueOf(after, 'strata_compute_run_queue_wait_seconds_count', { execution_source: 'manual' })).toBe(4);
    const isolates = valueOf(after, 'strata_compute_isolates', { engine: 'background' });
    expect(isolates).toBeGreaterThanOrEqual(1);
    expect(isolates).toBeLessThanOrEqual(2);
    expect(valueOf(after, 'strata_compute_isolates_created_total', { engine: 'background' })).toBeGreaterThanOrEqual(
      isolates!,
    );
  });

  it('counts an isolate lost to a memory bomb, and its sandbox process finishing and replaced', async () => {
    const before = await scrape();
    expect(valueOf(before, 'strata_compute_isolates_lost_total', { engine: 'background' })).toBe(0);
    expect(valueOf(before, 'strata_compute_sandbox_crashes_total', { engine: 'background' })).toBe(0);
    expect(valueOf(before, 'strata_compute_sandbox_draining', { engine: 'background' })).toBe(0);
    // A Map grown without end: V8 gives the isolate up where its limit cannot stop it.
    const bomb = await testRun(
      'async function run() { const m = new Map(); for (let i = 0; ; i++) m.set(i, [i, i, i]); }',
    );
    expect(await finalStatus(bomb)).toBe('failed');
    const after = await eventually(async () => {
      const samples = await scrape();
      const lost = valueOf(samples, 'strata_compute_isolates_lost_total', { engine: 'background' });
      if (lost !== 1) throw new Error(`isolates lost: ${lost}`);
      return samples;
    }, 10_000);
    // Not a crash: the process was ended by its engine once it had no run left.
    expect(valueOf(after, 'strata_compute_sandbox_crashes_total', { engine: 'background' })).toBe(0);
    await eventually(async () => {
      const draining = valueOf(await scrape(), 'strata_compute_sandbox_draining', { engine: 'background' });
      return draining === 0 ? true : undefined;
    }, 10_000);
  });

  it('answers only GET /metrics', async () => {
    expect((await fetch(`${metricsUrl}/`)).status).toBe(404);
    expect((await fetch(`${metricsUrl}/metrics`, { method: 'POST' })).status).toBe(404);
  });
});
