import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from '@jest/globals';
import { eventually } from '@strata/testing';
import { createProcessPoolEngine, type ProcessPoolEngineOptions } from '../src/processes.js';
import type { SandboxEngine } from '../src/types.js';
import { recordingBridge, runJob } from './support.js';

/**
 * The process-pool engine against real sandbox processes (the built
 * `dist/process/sandbox-process.js`: `npm test` builds before Jest runs).
 */
const BOMB = 'async function run() { const o = {}; for (let i = 0; ; i++) o["k" + i] = i; }';
/** Small enough that the object bomb runs V8 out of memory within a second or two. */
const BOMB_LIMITS = { memoryMb: 16, cpuMs: 5000, wallMs: 20_000 };

const engines: SandboxEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.close()));
});

function engine(options: Partial<ProcessPoolEngineOptions> & { isolates: number; isolatesPerProcess: number }) {
  const lost: { pid: number | undefined; message: string }[] = [];
  const created = createProcessPoolEngine({ maxRunsPerIsolate: 100, onIsolateLost: (e) => lost.push(e), ...options });
  engines.push(created);
  return { engine: created, lost };
}

/** The sandbox processes this test process started and that are still alive. */
function sandboxPids(): number[] {
  let out: string;
  try {
    out = execFileSync('pgrep', ['-P', String(process.pid), '-f', 'sandbox-process.js'], { encoding: 'utf8' });
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
  return out
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .sort((a, b) => a - b);
}

/** A bridge whose calls are answered when the test says so. */
function heldBridge() {
  const waiting: (() => void)[] = [];
  const bridge = recordingBridge(
    () =>
      new Promise((resolve) => {
        waiting.push(() => resolve('answered'));
      }),
  );
  return { bridge, answerAll: () => waiting.splice(0).forEach((answer) => answer()) };
}

describe('the process-pool engine', () => {
  it('runs jobs in its processes: api calls, logs, gates, stops and onStart cross over', async () => {
    const { engine: pool } = engine({ isolates: 4, isolatesPerProcess: 2 });
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, n) =>
        pool.run(
          runJob(
            'async function run() { const r = await api.fetchRecord("c", executionParams.n); api.log("n", executionParams.n); return r; }',
            { executionParams: { n } },
          ),
          recordingBridge((method, args) => ({ method, args })),
        ),
      ),
    );
    results.forEach((result, n) => {
      expect(result).toMatchObject({
        status: 'succeeded',
        returnValue: { method: 'fetchRecord', args: ['c', n] },
        logs: [{ level: 'info', message: `n ${n}` }],
      });
    });

    let started = 0;
    const closed = await pool.run(
      runJob('api.log("top level"); async function run() { return 1; }', {
        gate: Promise.resolve(false),
        onStart: () => started++,
      }),
      recordingBridge(),
    );
    expect(closed).toMatchObject({ status: 'failed', error: { name: 'NotStarted' }, logs: [] });
    expect(started).toBe(1);

    const stop = new AbortController();
    const held = heldBridge();
    const stopped = pool.run(
      runJob('async function run() { await api.fetchRecord("c", 1); }', { stop: stop.signal }),
      held.bridge,
    );
    await eventually(async () => (held.bridge.calls.length > 0 ? true : undefined), 10_000);
    stop.abort();
    expect(await stopped).toMatchObject({ status: 'failed', error: { name: 'Stopped' } });
    expect(held.bridge.calls[0]?.context.signal.aborted).toBe(true);
    expect(pool.stats()).toMatchObject({ runs: 42, processes: { serving: 2, draining: 0, isolatesLost: 0 } });
  });

  it('loses a process, not the engine, to a memory bomb: its other run finishes and a new process serves', async () => {
    // One process of two isolates: the bomb's neighbour is on the process that loses an isolate.
    const { engine: pool, lost } = engine({ isolates: 2, isolatesPerProcess: 2 });
    await pool.run(runJob('async function run() {}'), recordingBridge()); // the process is up
    const [before] = sandboxPids();
    const held = heldBridge();
    const neighbour = pool.run(
      runJob('async function run() { return await api.fetchRecord("c", 1); }', {}, { wallMs: 60_000 }),
      held.bridge,
    );
    await eventually(async () => (held.bridge.calls.length > 0 ? true : undefined), 10_000);
    let told = 0;
    const bomb = await pool.run(runJob(BOMB, { onIsolateLost: () => told++ }, BOMB_LIMITS), recordingBridge());
    expect(bomb).toMatchObject({ status: 'memory_exceeded', error: { name: 'MemoryLimitError' } });
    await eventually(async () => (lost.length > 0 ? true : undefined), 10_000);
    expect(told).toBe(1);
    expect(lost[0]).toMatchObject({ pid: before, message: expect.stringMatching(/out-of-memory|terminate/) });

    // The replacement serves while the lost process still finishes its neighbour's run.
    expect(await pool.run(runJob('async function run() { return "fresh"; }'), recordingBridge())).toMatchObject({
      status: 'succeeded',
      returnValue: 'fresh',
    });
    expect(pool.stats().processes).toMatchObject({ serving: 1, draining: 1, isolatesLost: 1 });
    held.answerAll();
    expect(await neighbour).toMatchObject({ status: 'succeeded', returnValue: 'answered' });
    // Its last run done, the lost process is ended.
    await eventually(async () => (pool.stats().processes?.draining === 0 ? true : undefined), 10_000);
    expect(sandboxPids()).not.toContain(before);
    expect(pool.stats().processes).toMatchObject({ serving: 1, isolatesLost: 1 });
  }, 90_000);

  it('keeps other processes serving while bombs go off, and replaces each lost one', async () => {
    const { engine: pool, lost } = engine({ isolates: 3, isolatesPerProcess: 1 });
    const ordinary = (n: number) =>
      pool.run(
        runJob('async function run() { await new Promise((r) => setTimeout(r, 20)); return executionParams; }', {
          executionParams: n,
        }),
        recordingBridge(),
      );
    const bombs = Array.from({ length: 3 }, () => pool.run(runJob(BOMB, {}, BOMB_LIMITS), recordingBridge()));
    const others = Array.from({ length: 30 }, (_, n) => ordinary(n));
    for (const result of await Promise.all(bombs)) expect(result.status).toBe('memory_exceeded');
    const answers = await Promise.all(others);
    expect(answers.map((r) => r.status)).toEqual(Array(30).fill('succeeded'));
    expect(answers.map((r) => r.returnValue)).toEqual(Array.from({ length: 30 }, (_, n) => n));
    await eventually(async () => (lost.length === 3 ? true : undefined), 20_000);
    expect((await ordinary(99)).status).toBe('succeeded');
  }, 90_000);

  it('fails the run of a process that dies under it, and serves the next on a new process', async () => {
    const { engine: pool } = engine({ isolates: 1, isolatesPerProcess: 1 });
    await pool.run(runJob('async function run() {}'), recordingBridge());
    const held = heldBridge();
    const running = pool.run(runJob('async function run() { await api.fetchRecord("c", 1); }'), held.bridge);
    await eventually(async () => (held.bridge.calls.length > 0 ? true : undefined), 10_000);
    const [pid] = sandboxPids();
    process.kill(pid!, 'SIGKILL');
    expect(await running).toMatchObject({ status: 'failed', error: { name: 'SandboxLost' } });
    expect(await pool.run(runJob('async function run() { return 2; }'), recordingBridge())).toMatchObject({
      status: 'succeeded',
      returnValue: 2,
    });
    expect(pool.stats().processes).toMatchObject({ serving: 1, crashed: 1 });
  }, 60_000);

  it('leaves its processes’ stop to the engine: Ctrl-C or a TERM sent to them does not cut their runs', async () => {
    const { engine: pool } = engine({ isolates: 2, isolatesPerProcess: 1 });
    const held = heldBridge();
    const running = pool.run(runJob('async function run() { return await api.fetchRecord("c", 1); }'), held.bridge);
    await eventually(async () => (held.bridge.calls.length > 0 ? true : undefined), 10_000);
    // What a terminal's Ctrl-C, or a start script stopping every process under it, sends them all.
    for (const pid of sandboxPids()) for (const signal of ['SIGINT', 'SIGTERM'] as const) process.kill(pid, signal);
    held.answerAll();
    expect(await running).toMatchObject({ status: 'succeeded', returnValue: 'answered' });
    expect(pool.stats().processes).toMatchObject({ serving: 2, crashed: 0 });
  });

  it('ends its processes when it closes', async () => {
    const { engine: pool } = engine({ isolates: 2, isolatesPerProcess: 1 });
    await pool.run(runJob('async function run() {}'), recordingBridge());
    expect(sandboxPids()).toHaveLength(2);
    await pool.close();
    expect(sandboxPids()).toHaveLength(0);
    await expect(pool.run(runJob('async function run() {}'), recordingBridge())).rejects.toMatchObject({
      name: 'SandboxBusyError',
    });
  });
});
