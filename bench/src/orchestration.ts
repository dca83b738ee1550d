/**
 * `pnpm bench` → orchestration: what the embedded engine adds on top of the function runs it starts.
 *
 * 1. Step overhead: runs of 10 compute steps of a trivial function, one run at a time.
 *    A step's latency is from the previous step's end (the run's start for the first)
 *    to its own end, from the run-step rows. Baseline: the same function run 10 times
 *    back to back through the same compute pipeline (`<prefix>.compute.functions.run`,
 *    then compute's end notice), from this process, as the engine does.
 * 2. Throughput: 100 runs of 3 compute steps started at once through the API; runs
 *    completed per second until the last ends. Baseline: 100 chains of 3 back-to-back
 *    function runs through the pipeline at once, chains per second.
 *
 * Target (issue 17): orchestration overhead under 5 ms per step at p50 (step p50 minus
 * baseline p50).
 */
import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  functionRunEndedSubject,
  functionRunStartSubject,
  type FunctionRunEnded,
  type FunctionRunStartReply,
} from '@strata/contracts';
import { eventually } from '@strata/testing';
import { call } from '@strata/testkit';
import { benchWorkspace, startUnlimitedServices } from './services.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const RUNS = env('BENCH_ORCHESTRATION_RUNS', 20);
const STEPS = 10;
const CONCURRENT = env('BENCH_ORCHESTRATION_CONCURRENT', 100);
const ISOLATES = env('BENCH_COMPUTE_ISOLATES', 2);
const CODE = 'async function run() { return { success: true, data: { n: (executionParams.input?.n ?? 0) + 1 } }; }';

const quantile = (xs: number[], q: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};
const ms = (x: number) => `${x.toFixed(1).padStart(6)} ms`;

/** Function runs through the compute pipeline from here, each awaited to compute's end notice. */
class Pipeline {
  private readonly waiting = new Map<string, () => void>();
  private readonly ended = new Set<string>();

  private constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
  ) {}

  static async open(prefix: string): Promise<Pipeline> {
    const nc = await connect({ servers: '127.0.0.1:4222' });
    const pipeline = new Pipeline(nc, prefix);
    const sub = nc.subscribe(functionRunEndedSubject(prefix));
    void (async () => {
      for await (const msg of sub) {
        const { runId } = msg.json<FunctionRunEnded>();
        const wake = pipeline.waiting.get(runId);
        if (wake) wake();
        else pipeline.ended.add(runId);
      }
    })();
    await nc.flush();
    return pipeline;
  }

  /** One function run, started and awaited to its end notice. */
  async run(workspaceSlug: string, functionId: string): Promise<void> {
    const reply = await this.nc.request(
      functionRunStartSubject(this.prefix),
      JSON.stringify({
        workspaceSlug,
        functionId,
        executionParams: { input: { n: 1 } },
        timeoutMs: 30_000,
        origin: { runId: `bench-${randomUUID()}`, stepId: 'bench', attempt: 1 },
      }),
      { timeout: 10_000 },
    );
    const started = reply.json<FunctionRunStartReply>();
    if (!started.started) throw new Error(`not started: ${started.reason}`);
    if (this.ended.delete(started.runId)) return;
    await new Promise<void>((resolve) => this.waiting.set(started.runId, resolve));
    this.waiting.delete(started.runId);
  }

  close(): Promise<void> {
    return this.nc.close();
  }
}

async function main(): Promise<void> {
  const services = await startUnlimitedServices(
    { COMPUTE_WORKER_ISOLATES: String(ISOLATES), ORCHESTRATION_RUN_RETENTION_DAYS: '1' },
    ['auth', 'data', 'compute', 'worker', 'orchestration'],
  );
  const pipeline = await Pipeline.open(services.natsPrefix);
  try {
    const { token } = await benchWorkspace(services);
    const computeBase = `${services.computeUrl}/data/workspace/bench/api/v1`;
    const base = `${services.orchestrationUrl}/orchestration/ws/bench/api/v1`;
    const fn = await call('POST', `${computeBase}/compute-functions`, { token, body: { name: 'step', code: CODE } });
    if (fn.status !== 201) throw new Error(`function: ${JSON.stringify(fn.body)}`);
    const functionId: string = fn.body.id;
    const chain = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        id: `s${i + 1}`,
        type: 'compute',
        functionId,
        ...(i + 1 < n ? { nextStepId: `s${i + 2}` } : {}),
      }));
    const orchestration = async (slug: string, steps: number) => {
      const made = await call('POST', `${base}/orchestrations`, {
        token,
        body: { slug, name: slug, status: 'active', trigger: { type: 'on-demand' }, steps: chain(steps) },
      });
      if (made.status !== 201) throw new Error(`orchestration: ${JSON.stringify(made.body)}`);
      return made.body.id as string;
    };
    const startRun = async (id: string) =>
      (await call('POST', `${base}/orchestrations/${id}/runs`, { token, body: { input: { n: 0 } } })).body.id as string;
    const finished = (id: string, runId: string) =>
      eventually(
        async () => {
          const run = await call('GET', `${base}/orchestrations/${id}/runs/${runId}?include=steps`, { token });
          return run.body.status === 'completed' || run.body.status === 'failed' ? run.body : undefined;
        },
        60_000,
        5,
      );

    // Warm-up: isolates, code caches, connections.
    for (let i = 0; i < 20; i++) await pipeline.run('bench', functionId);
    const tenSteps = await orchestration('ten-steps', STEPS);
    await finished(tenSteps, await startRun(tenSteps));

    // 1. Step overhead.
    const baseline: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      for (let i = 0; i < STEPS; i++) {
        const t0 = performance.now();
        await pipeline.run('bench', functionId);
        baseline.push(performance.now() - t0);
      }
    }
    const steps: number[] = [];
    let failed = 0;
    for (let r = 0; r < RUNS; r++) {
      const run = await finished(tenSteps, await startRun(tenSteps));
      if (run.status !== 'completed') failed++;
      let previous = Date.parse(run.startedAt);
      for (const step of run.steps) {
        const end = Date.parse(step.completedAt);
        steps.push(end - previous);
        previous = end;
      }
    }

    // 2. Throughput: CONCURRENT runs of 3 steps at once, against as many 3-run chains.
    const threeSteps = await orchestration('three-steps', 3);
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENT }, async () => {
        for (let i = 0; i < 3; i++) await pipeline.run('bench', functionId);
      }),
    );
    const chainsPerSecond = CONCURRENT / ((performance.now() - t0) / 1000);
    const t1 = performance.now();
    const runIds = await Promise.all(Array.from({ length: CONCURRENT }, () => startRun(threeSteps)));
    const ended = async (status: string): Promise<number> =>
      (await call('GET', `${base}/orchestrations/${threeSteps}/runs?status=${status}&pageSize=1`, { token })).body.meta
        .total;
    const failedRuns = await eventually(
      async () => {
        const [completed, failedNow] = [await ended('completed'), await ended('failed')];
        return completed + failedNow >= runIds.length ? failedNow : undefined;
      },
      120_000,
      20,
    );
    const runsPerSecond = CONCURRENT / ((performance.now() - t1) / 1000);

    const [b50, b99, s50, s99] = [
      quantile(baseline, 0.5),
      quantile(baseline, 0.99),
      quantile(steps, 0.5),
      quantile(steps, 0.99),
    ];
    console.log(
      `orchestration (${ISOLATES} isolates on one worker; ${RUNS} runs of ${STEPS} compute steps, one at a time)`,
    );
    console.log(
      `  1. per step            p50 ${ms(s50)}  p99 ${ms(s99)}  (${steps.length} steps, ${failed} runs not completed)`,
    );
    console.log(
      `     baseline: function  p50 ${ms(b50)}  p99 ${ms(b99)}  (${baseline.length} runs back to back through compute)`,
    );
    console.log(`     ratio               p50 ${(s50 / b50).toFixed(2)}x  p99 ${(s99 / b99).toFixed(2)}x`);
    console.log(`     overhead per step   p50 ${ms(s50 - b50)}  (target under 5 ms)`);
    console.log(`  2. ${CONCURRENT} concurrent runs of 3 steps: ${runsPerSecond.toFixed(1)} runs/s`);
    console.log(
      `     baseline: ${CONCURRENT} concurrent chains of 3 function runs: ${chainsPerSecond.toFixed(1)} chains/s`,
    );
    console.log(`     ratio ${(runsPerSecond / chainsPerSecond).toFixed(2)}x (${failedRuns} runs failed)`);
  } finally {
    await pipeline.close();
    await services.stop();
  }
}

await main();
