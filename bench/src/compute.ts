/**
 * `pnpm bench` → compute: trivial function runs (`async function run() { return { success: true, data: 1 }; }`).
 *
 * 1. The engine a worker uses (`createProcessPoolEngine` with the worker's settings and the
 *    default run limits, a no-op bridge: its isolates in sandbox processes since 2026-11-29),
 *    and the in-process engine inside each of those processes (`createIsolatedVmEngine`),
 *    against a bare isolated-vm loop in this process: a pooled isolate, a new context per run,
 *    compile, run, await `run()`. Per-run latency one at a time (p50/p99), and runs/s with one
 *    caller per isolate; CPU per run of this process and of the sandbox processes.
 * 2. The whole path, one run at a time: `POST /compute-functions/test` to the compute API,
 *    JetStream, a sandbox worker process (2 isolates), the run row; auth, data, compute API and
 *    worker each in a process of its own. From the run's queuedAt to its finishedAt (the run
 *    record) and, client-observed, from the POST to a `GET /function-runs?jobId=` that shows it
 *    finished. Baseline: the bare loop's per-run time from 1.
 * 3. Runs per second: `BENCH_COMPUTE_RUNS` test runs posted `BENCH_COMPUTE_CONCURRENCY` at a
 *    time, from the first queuedAt to the last finishedAt; baseline: the bare loop's runs/s on
 *    as many isolates (threads) as the worker has.
 * 4. Drain: `BENCH_COMPUTE_DRAIN_RUNS` test runs queued while no worker runs, then the worker
 *    (`BENCH_COMPUTE_DRAIN_WORKERS` of them) starts and takes them all: runs/s from the first
 *    started to the last finished, what the workers execute without the API's POSTs on the same
 *    cores. `BENCH_COMPUTE_PHASES=drain` runs this phase alone (with the bare loop).
 *
 * CPU per run by process (`/proc`, cpu.ts) is printed for each phase.
 */
import ivm from 'isolated-vm';
import pg from 'pg';
import { ComputeConfig } from '@strata/compute';
import type { SandboxBridge, SandboxJob, SandboxLimits } from '@strata/sandbox';
import { createIsolatedVmEngine } from '@strata/sandbox/isolated-vm';
import { createProcessPoolEngine } from '@strata/sandbox/processes';
import { BenchClient } from './http.js';
import { childrenOf, cpuPerOp, sampleCpu } from './cpu.js';
import { measure } from './measure.js';
import { benchWorkspace, startUnlimitedServices } from './services.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
/** Runs one at a time in process, per variant (after as many to warm up). */
const LOCAL_RUNS = env('BENCH_COMPUTE_LOCAL_RUNS', 2000);
/** Runs one at a time through the services, per polling mode (after 50 to warm up). */
const SAMPLES = env('BENCH_COMPUTE_SAMPLES', 200);
/** Runs of the throughput phase. */
const TOTAL = env('BENCH_COMPUTE_RUNS', 3000);
/** Test POSTs at once in the throughput phase. */
const CONCURRENCY = env('BENCH_COMPUTE_CONCURRENCY', 32);
/** Runs queued while no worker runs, then drained by one worker (phase 4). */
const DRAIN_TOTAL = env('BENCH_COMPUTE_DRAIN_RUNS', 5000);
/** `drain` runs phase 4 alone (with the in-process baseline), for quick comparisons. */
const ONLY_DRAIN = process.env['BENCH_COMPUTE_PHASES'] === 'drain';
/** Sandbox worker processes in the drain phase (4), each with BENCH_COMPUTE_ISOLATES / this many isolates. */
const DRAIN_WORKERS = env('BENCH_COMPUTE_DRAIN_WORKERS', 1);
/**
 * Isolates of the worker process, and of the in-process engine and bare loop: the worker's own
 * default (`COMPUTE_WORKER_ISOLATES`, 4) since 2026-11-26; 2 before.
 */
const ISOLATES = env('BENCH_COMPUTE_ISOLATES', 4);
/** How often the client-observed pass asks whether the run finished. */
const FAST_POLL_MS = env('BENCH_COMPUTE_POLL_MS', 2);
/** The quiet pass asks this rarely, so its polls barely compete with the run it waits for. */
const QUIET_POLL_MS = 25;
const E2E_WARMUP = 50;

const CODE = 'async function run() { return { success: true, data: 1 }; }';
const FINAL = new Set(['succeeded', 'failed', 'timed_out', 'cancelled']);

// The defaults a worker runs with: COMPUTE_* as ComputeConfig initialises them.
const defaults = new ComputeConfig();
const LIMITS: SandboxLimits = {
  memoryMb: defaults.COMPUTE_MEMORY_MB,
  cpuMs: defaults.COMPUTE_CPU_MS,
  wallMs: defaults.COMPUTE_WALL_MS,
  maxLogBytes: defaults.COMPUTE_MAX_LOG_BYTES,
  maxLogEntries: defaults.COMPUTE_MAX_LOG_ENTRIES,
  maxOutputBytes: defaults.COMPUTE_MAX_OUTPUT_BYTES,
};

interface Stats {
  p50: number;
  p99: number;
  n: number;
}

function stats(values: number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), n: sorted.length };
}

const ms = (v: number) => `${v.toFixed(2).padStart(7)} ms`;
const pp = (s: Stats) => `p50 ${ms(s.p50)}  p99 ${ms(s.p99)}`;
const sleep = (t: number) => new Promise((resolve) => setTimeout(resolve, t));

// ---------------------------------------------------------------------------------------------
// 1. In process: the bare isolated-vm loop and the worker's engine.

/** One run the bare way: a fresh context on a pooled isolate, compile, run, call `run()`, await it. */
async function bareRun(isolate: ivm.Isolate): Promise<void> {
  const context = await isolate.createContext();
  const script = await isolate.compileScript(CODE, { filename: 'function.js' });
  await script.run(context);
  const run: ivm.Reference = await context.global.get('run', { reference: true });
  const value = (await run.apply(undefined, [], { result: { promise: true, copy: true } })) as { data?: unknown };
  run.release();
  script.release();
  context.release();
  if (value?.data !== 1) throw new Error(`bare run answered ${JSON.stringify(value)}`);
}

interface Local {
  latency: Stats;
  perSecond: number;
  cpuPerRun: string;
  note: string;
}

/** Per-run latency one at a time, then runs/s with one caller per isolate, both after a warm-up. */
async function timeLocal(runOne: (caller: number) => Promise<void>, total: number, callers: number) {
  for (let i = 0; i < Math.min(total, 500); i++) await runOne(0);
  const latencies: number[] = [];
  for (let i = 0; i < total; i++) {
    const t0 = performance.now();
    await runOne(0);
    latencies.push(performance.now() - t0);
  }
  // This process and its sandbox processes (a process-pool engine's): PostgreSQL and NATS have no
  // part in it (and their backends come and go).
  const own = () => {
    const sample = sampleCpu({ bench: process.pid });
    const sandboxes = childrenOf(process.pid).map((pid) => sampleCpu({ sandbox: pid }).get('sandbox') ?? 0);
    const out = new Map([['bench', sample.get('bench') ?? 0]]);
    if (sandboxes.length > 0)
      out.set(
        'sandboxes',
        sandboxes.reduce((a, b) => a + b, 0),
      );
    return out;
  };
  const before = own();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      while (next++ < total) await runOne(caller);
    }),
  );
  const perSecond = total / ((performance.now() - started) / 1000);
  return { latency: stats(latencies), perSecond, cpuPerRun: cpuPerOp(before, own(), total) };
}

async function bareLoop(): Promise<Local> {
  // One isolate per caller, each reused for every run (the "pooled isolate"), never recycled.
  const isolates = Array.from({ length: ISOLATES }, () => new ivm.Isolate({ memoryLimit: LIMITS.memoryMb }));
  try {
    const figures = await timeLocal((caller) => bareRun(isolates[caller]!), LOCAL_RUNS, ISOLATES);
    return { ...figures, note: `${ISOLATES} isolates, never recycled` };
  } finally {
    for (const isolate of isolates) isolate.dispose();
  }
}

const noopBridge: SandboxBridge = { call: () => Promise.resolve(null) };
const JOB: SandboxJob = { kind: 'run', code: CODE, triggerParams: {}, executionParams: {}, limits: LIMITS };

async function engineLoop(maxRunsPerIsolate: number, where: 'processes' | 'in process'): Promise<Local> {
  const engine =
    where === 'processes'
      ? createProcessPoolEngine({
          isolates: ISOLATES,
          isolatesPerProcess: defaults.COMPUTE_SANDBOX_ISOLATES_PER_PROCESS,
          maxRunsPerIsolate,
        })
      : createIsolatedVmEngine({ isolates: ISOLATES, maxRunsPerIsolate });
  try {
    const figures = await timeLocal(
      async () => {
        const result = await engine.run(JOB, noopBridge);
        if (result.status !== 'succeeded') throw new Error(`engine run: ${JSON.stringify(result)}`);
      },
      LOCAL_RUNS,
      ISOLATES,
    );
    const s = engine.stats();
    const r = s.isolatesRetired;
    return {
      ...figures,
      note: `${s.runs} runs, ${s.isolatesCreated} isolates created (retired: runs ${r.runs}, heap ${r.heap}, killed ${r.killed})`,
    };
  } finally {
    await engine.close();
  }
}

// ---------------------------------------------------------------------------------------------
// 2 and 3. Through the services.

interface RunRow {
  status: string;
  queuedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

interface Passes {
  queuedToFinished: Stats;
  queuedToStarted: Stats;
  startedToFinished: Stats;
  client: Stats;
  cpuPerRun: string;
}

async function main(): Promise<void> {
  const bare = await bareLoop();
  const engine = ONLY_DRAIN ? bare : await engineLoop(defaults.COMPUTE_RUNS_PER_ISOLATE, 'processes');
  const inProcess = ONLY_DRAIN ? bare : await engineLoop(defaults.COMPUTE_RUNS_PER_ISOLATE, 'in process');
  const engineNoRecycle = ONLY_DRAIN ? bare : await engineLoop(1_000_000, 'in process');

  const services = await startUnlimitedServices({ COMPUTE_WORKER_ISOLATES: String(ISOLATES) }, [
    'auth',
    'data',
    'compute',
    'worker',
  ]);
  const db = new pg.Pool({ connectionString: services.databaseUrl, max: 2 });
  const cpu = () => {
    const sample = new Map(
      sampleCpu({
        auth: services.pid('auth'),
        data: services.pid('data'),
        compute: services.pid('compute'),
        worker: services.pid('worker'),
        worker2: services.pid('worker2'),
        bench: process.pid,
      }),
    );
    // The workers' sandbox processes, alive now (a process that ended took its time with it: rare here).
    const workers = [services.pid('worker'), services.pid('worker2')].filter((pid) => pid !== undefined);
    const sandboxes = workers.flatMap((pid) => childrenOf(pid));
    if (sandboxes.length > 0) {
      const ms = sandboxes.reduce((sum, pid) => sum + (sampleCpu({ s: pid }).get('s') ?? 0), 0);
      sample.set('sandboxes', ms);
    }
    return sample;
  };
  try {
    const { token } = await benchWorkspace(services);
    const base = `${services.computeUrl}/data/workspace/bench/api/v1`;
    const http = new BenchClient(token, CONCURRENCY);
    const post = async (): Promise<{ jobId: string; queuedAt: string }> => {
      const res = await http.send('POST', `${base}/compute-functions/test`, { code: CODE, params: {} });
      if (res.status !== 200) throw new Error(`test: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body as { jobId: string; queuedAt: string };
    };
    const runOf = async (jobId: string): Promise<RunRow | undefined> => {
      const res = await http.send('GET', `${base}/function-runs?jobId=${jobId}`);
      if (res.status !== 200) throw new Error(`runs: ${res.status} ${JSON.stringify(res.body)}`);
      return (res.body as { runs: RunRow[] }).runs[0];
    };

    // One run at a time: POST, then poll every `pollMs` until the run is final.
    const oneAtATime = async (samples: number, pollMs: number): Promise<Passes> => {
      const q2f: number[] = [];
      const q2s: number[] = [];
      const s2f: number[] = [];
      const client: number[] = [];
      let before = cpu();
      for (let i = 0; i < E2E_WARMUP + samples; i++) {
        if (i === E2E_WARMUP) before = cpu();
        const t0 = performance.now();
        const { jobId } = await post();
        let row: RunRow | undefined;
        for (;;) {
          await sleep(pollMs);
          row = await runOf(jobId);
          if (row && FINAL.has(row.status)) break;
        }
        const seen = performance.now() - t0;
        if (row.status !== 'succeeded') throw new Error(`run ${jobId}: ${JSON.stringify(row)}`);
        if (i < E2E_WARMUP) continue;
        const queued = Date.parse(row.queuedAt);
        const started = Date.parse(row.startedAt!);
        const finished = Date.parse(row.finishedAt!);
        q2f.push(finished - queued);
        q2s.push(started - queued);
        s2f.push(finished - started);
        client.push(seen);
      }
      return {
        queuedToFinished: stats(q2f),
        queuedToStarted: stats(q2s),
        startedToFinished: stats(s2f),
        client: stats(client),
        cpuPerRun: cpuPerOp(before, cpu(), samples),
      };
    };
    const unfinished = async (jobIds: string[]) =>
      Number(
        (
          await db.query<{ n: string }>(
            `SELECT count(*) AS n FROM compute.runs WHERE job_id = ANY($1::uuid[]) AND finished_at IS NULL`,
            [jobIds],
          )
        ).rows[0]!.n,
      );
    const waitFinished = async (jobIds: string[]) => {
      const deadline = Date.now() + 300_000;
      while ((await unfinished(jobIds)) > 0) {
        if (Date.now() > deadline) throw new Error('the runs did not finish in 5 minutes');
        await sleep(100);
      }
    };
    const spanOf = async (jobIds: string[]) => {
      const row = (
        await db.query<{
          first_queued: Date;
          first_started: Date;
          last_queued: Date;
          last_finished: Date;
          succeeded: string;
        }>(
          `SELECT min(queued_at) AS first_queued, min(started_at) AS first_started, max(queued_at) AS last_queued,
                  max(finished_at) AS last_finished, count(*) FILTER (WHERE status = 'succeeded') AS succeeded
             FROM compute.runs WHERE job_id = ANY($1::uuid[])`,
          [jobIds],
        )
      ).rows[0]!;
      if (Number(row.succeeded) !== jobIds.length)
        throw new Error(`${row.succeeded} of ${jobIds.length} runs succeeded`);
      return row;
    };

    // 4. Drain: runs queued while no worker runs, then one worker takes them all.
    const drain = async () => {
      await services.stopApp('worker');
      const jobIds: string[] = [];
      await measure(DRAIN_TOTAL, CONCURRENCY, async () => {
        jobIds.push((await post()).jobId);
      });
      // The API's backends flush their statistics when idle: read once they are all counted.
      await sleep(11_000);
      const statsBefore = await databaseStats();
      await Promise.all((['worker', 'worker2'] as const).slice(0, DRAIN_WORKERS).map((app) => services.startApp(app)));
      const before = cpu();
      await waitFinished(jobIds);
      const cpuPerRun = cpuPerOp(before, cpu(), DRAIN_TOTAL);
      const span = await spanOf(jobIds);
      const spanMs = span.last_finished.getTime() - span.first_started.getTime();
      // A backend reports its statistics when it ends: the workers' connections are counted once they stopped.
      await Promise.all((['worker', 'worker2'] as const).slice(0, DRAIN_WORKERS).map((app) => services.stopApp(app)));
      await sleep(11_000);
      const statsAfter = await databaseStats();
      const perRun = (key: keyof DatabaseStats) => ((statsAfter[key] - statsBefore[key]) / DRAIN_TOTAL).toFixed(2);
      const statements = `transactions ${perRun('xacts')} (each statement outside a transaction is one), rows inserted ${perRun('inserted')}, updated ${perRun('updated')} (HOT ${perRun('hot')}) per run`;
      return { perSecond: DRAIN_TOTAL / (spanMs / 1000), spanMs, cpuPerRun, statements };
    };
    /** The bench database's counters (pg_stat_database, pg_stat_user_tables): transactions and row writes. */
    interface DatabaseStats {
      xacts: number;
      inserted: number;
      updated: number;
      hot: number;
    }
    const databaseStats = async (): Promise<DatabaseStats> => {
      const row = (
        await db.query<{ xacts: string; inserted: string; updated: string; hot: string }>(
          `SELECT (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()) AS xacts,
                  sum(n_tup_ins) AS inserted, sum(n_tup_upd) AS updated, sum(n_tup_hot_upd) AS hot
             FROM pg_stat_user_tables`,
        )
      ).rows[0]!;
      return {
        xacts: Number(row.xacts),
        inserted: Number(row.inserted),
        updated: Number(row.updated),
        hot: Number(row.hot),
      };
    };
    const ratio = (ours: number, baseline: number) => `${(ours / baseline).toFixed(2)}x`;
    const drainLines = (drained: Awaited<ReturnType<typeof drain>>) => [
      `4. drain: ${DRAIN_TOTAL} runs queued while no worker ran, then ${DRAIN_WORKERS} worker process(es) of ${ISOLATES} isolates take them`,
      `  strata (first started → last finished) ${drained.perSecond.toFixed(0).padStart(6)} runs/s  (${(drained.spanMs / 1000).toFixed(2)} s)`,
      `  bare loop, ${ISOLATES} isolates               ${bare.perSecond.toFixed(0).padStart(6)} runs/s`,
      `  ratio (strata / bare): ${ratio(drained.perSecond, bare.perSecond)} (target: at least 1000 runs/s)`,
      `  CPU ms per run (worker and what it talks to): ${drained.cpuPerRun}`,
      `  PostgreSQL (the whole database, the bench's polls and the API's background included): ${drained.statements}`,
      '',
    ];
    if (ONLY_DRAIN) {
      process.stdout.write([`compute/trivial runs, drain only`, '', ...drainLines(await drain())].join('\n'));
      return;
    }

    const quiet = await oneAtATime(SAMPLES, QUIET_POLL_MS);
    const fast = await oneAtATime(SAMPLES, FAST_POLL_MS);

    // Throughput: TOTAL test runs posted CONCURRENCY at a time; the worker drains the queue.
    const jobIds: string[] = [];
    const before = cpu();
    const posted = await measure(TOTAL, CONCURRENCY, async () => {
      jobIds.push((await post()).jobId);
    });
    await waitFinished(jobIds);
    const throughputCpu = cpuPerOp(before, cpu(), TOTAL);
    const span = await spanOf(jobIds);
    const spanMs = span.last_finished.getTime() - span.first_queued.getTime();
    const runsPerSecond = TOTAL / (spanMs / 1000);
    const drainLagMs = span.last_finished.getTime() - span.last_queued.getTime();
    const drained = await drain();
    http.close();

    const lines = [
      `compute/trivial runs (\`${CODE}\`), ${ISOLATES} isolates; services in their own processes`,
      '',
      `1. worker overhead, one run at a time in process (${LOCAL_RUNS} runs each after a warm-up)`,
      `  bare isolated-vm loop      ${pp(bare.latency)}  (${bare.note})`,
      `  worker engine (processes)  ${pp(engine.latency)}  (${engine.note})`,
      `  engine in process          ${pp(inProcess.latency)}  (${inProcess.note})`,
      `  in process, no recycling   ${pp(engineNoRecycle.latency)}  (${engineNoRecycle.note})`,
      `  overhead (engine - bare) at p50: ${ms(engine.latency.p50 - bare.latency.p50)} (target < 1 ms); ` +
        `ratio p50 ${ratio(engine.latency.p50, bare.latency.p50)}, p99 ${ratio(engine.latency.p99, bare.latency.p99)}`,
      `  sandbox processes' cost (processes - in process) at p50: ${ms(engine.latency.p50 - inProcess.latency.p50)}; ` +
        `ratio p50 ${ratio(engine.latency.p50, inProcess.latency.p50)}`,
      `  CPU ms per run (isolate threads included): bare ${bare.cpuPerRun}; engine ${engine.cpuPerRun}; ` +
        `in process ${inProcess.cpuPerRun}; no recycling ${engineNoRecycle.cpuPerRun}`,
      '',
      `2. test endpoint → finished, one run at a time (${SAMPLES} runs per pass after ${E2E_WARMUP} to warm up; run-record times have 1 ms resolution)`,
      `  quiet pass (polls every ${QUIET_POLL_MS} ms)   queued→finished ${pp(quiet.queuedToFinished)}`,
      `                                   queued→started  ${pp(quiet.queuedToStarted)}`,
      `                                   started→finished ${pp(quiet.startedToFinished)}`,
      `  fast pass (polls every ${FAST_POLL_MS} ms)     queued→finished ${pp(fast.queuedToFinished)}`,
      `                                   POST→seen finished (client) ${pp(fast.client)}`,
      `  baseline: bare loop per run     ${pp(bare.latency)}`,
      `  ratio queued→finished / bare run (quiet pass): p50 ${ratio(quiet.queuedToFinished.p50, bare.latency.p50)}, ` +
        `p99 ${ratio(quiet.queuedToFinished.p99, bare.latency.p99)} (target: queued→finished < 10 ms p50)`,
      `  CPU ms per run, quiet pass: ${quiet.cpuPerRun}`,
      `  CPU ms per run, fast pass:  ${fast.cpuPerRun}`,
      '',
      `3. throughput: ${TOTAL} test runs posted ${CONCURRENCY} at a time`,
      `  strata (first queued → last finished)  ${runsPerSecond.toFixed(0).padStart(6)} runs/s  ` +
        `(${(spanMs / 1000).toFixed(2)} s; POSTs ${posted.perSecond.toFixed(0)}/s, p50 ${posted.p50Ms.toFixed(1)} ms, ` +
        `p99 ${posted.p99Ms.toFixed(1)} ms; last finished ${drainLagMs} ms after last queued)`,
      `  bare loop, ${ISOLATES} isolates               ${bare.perSecond.toFixed(0).padStart(6)} runs/s`,
      `  worker engine, ${ISOLATES} callers      ${engine.perSecond.toFixed(0).padStart(6)} runs/s (in process: ${inProcess.perSecond.toFixed(0)}; no recycling: ${engineNoRecycle.perSecond.toFixed(0)})`,
      `  ratio (strata / bare): ${ratio(runsPerSecond, bare.perSecond)} (target: at least 1000 runs/s)`,
      `  CPU ms per run: ${throughputCpu}`,
      '',
      ...drainLines(drained),
    ];
    process.stdout.write(lines.join('\n'));
  } finally {
    await db.end();
    await services.stop();
  }
}

await main();
