/**
 * `node --no-node-snapshot bench/dist/endpoint-burst.js` → an endpoint burst (issue 37,
 * point 6): `BENCH_BURST_CLIENTS` (8) keep-alive clients making `BENCH_BURST_CALLS`
 * (1,500) calls in all to a trivial public endpoint through the gateway, the compute
 * services and one sandbox worker at their default settings (rate limits lifted: they
 * would cap a benchmark, not measure it). Printed: how many calls were refused (503) or
 * answered anything but the function's 200, throughput, p50 and p99; then one call at a
 * time (point 5's latency target). Baseline, in the same run: the same function behind
 * a bare node:http server calling the sandbox engine directly with as many isolates as
 * the worker has endpoint isolates, in a process of its own (bare-endpoint.ts).
 *
 * Targets: no 503 in the burst, at a throughput no worse (relative to the bare server)
 * than the bare server's own; one call at a time within 2x the bare server's p50.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { call } from '@strata/testkit';
import { freePort } from '@strata/testing';
import { defaultEndpointIsolates } from '@strata/compute';
import { ENDPOINT_CODE, spawnBareEndpointServer, type BareServer } from './bare-endpoint.js';
import { BenchClient } from './http.js';
import { benchWorkspace, startUnlimitedServices } from './services.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const CLIENTS = env('BENCH_BURST_CLIENTS', 8);
const CALLS = env('BENCH_BURST_CALLS', 1500);
const SINGLE = env('BENCH_BURST_SINGLE_CALLS', 300);
const WARMUP = 100;
const GATEWAY_MAIN = fileURLToPath(new URL('../../apps/gateway/dist/main.js', import.meta.url));
/** Extra Node flags for the gateway, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
const GATEWAY_ARGS = (process.env['BENCH_GATEWAY_NODE_ARGS'] ?? '').split(' ').filter(Boolean);

interface Burst {
  readonly statuses: Map<number, number>;
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

/** `total` calls, `concurrency` at a time; every answer counted by status (none is thrown on). */
async function burst(client: BenchClient, url: string, total: number, concurrency: number): Promise<Burst> {
  const statuses = new Map<number, number>();
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t0 = performance.now();
        const res = await client.send('POST', url, { n: i });
        latencies.push(performance.now() - t0);
        const ok = res.status === 200 && (res.body as { n?: number } | undefined)?.n === i;
        const key = ok || res.status !== 200 ? res.status : -1;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { statuses, perSecond: total / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
}

async function startGateway(urls: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const envOf: NodeJS.ProcessEnv = {
    STRATA_ENV: 'development',
    ...process.env,
    GATEWAY_PORT: String(port),
    LOG_LEVEL: 'error',
  };
  for (const [name, url] of Object.entries(urls)) envOf[`${name}_SERVICE_URL`] = url;
  const child = spawn(process.execPath, [...GATEWAY_ARGS, '--enable-source-maps', GATEWAY_MAIN], {
    env: envOf,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const waitMs = Number(process.env['BENCH_START_TIMEOUT_MS'] ?? 30_000);
  const deadline = Date.now() + waitMs;
  for (;;) {
    if ((await fetch(`${url}/healthz`).catch(() => undefined))?.ok) break;
    if (child.exitCode !== null) throw new Error(`the gateway exited (${child.exitCode})`);
    if (Date.now() > deadline) throw new Error(`the gateway did not start within ${waitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, url };
}

const ms = (v: number) => `${v.toFixed(2).padStart(7)} ms`;
const counts = (b: Burst) =>
  [...b.statuses]
    .sort(([a], [b2]) => a - b2)
    .map(([status, n]) => `${status === -1 ? 'wrong body' : status}: ${n}`)
    .join(', ');
const line = (label: string, b: Burst) =>
  `  ${label.padEnd(34)} ${b.perSecond.toFixed(0).padStart(6)} calls/s  p50 ${ms(b.p50)}  p99 ${ms(b.p99)}  503s ${String(b.statuses.get(503) ?? 0).padStart(4)}  (${counts(b)})`;

/** Where the run is, on stderr (a run on a loaded machine takes minutes). */
const progress = (what: string) => process.stderr.write(`[endpoint-burst] ${new Date().toISOString()} ${what}\n`);

async function main(): Promise<void> {
  const isolates = defaultEndpointIsolates();
  progress('starting the services');
  const services = await startUnlimitedServices({}, ['auth', 'data', 'compute', 'worker']);
  progress('services ready');
  let bare: BareServer | undefined;
  let gateway: { child: ChildProcess; url: string } | undefined;
  try {
    bare = await spawnBareEndpointServer(isolates);
    gateway = await startGateway({
      AUTH: services.authUrl,
      DATA: services.dataUrl,
      COMPUTE: services.computeUrl,
      COMPUTE_WORKER: services.workerUrl,
      ORCHESTRATION: services.computeUrl,
      WEBHOOKS: services.computeUrl,
      INBOUND: services.computeUrl,
    });
    progress('gateway ready');
    const bareUrl = bare.url;
    const { token } = await benchWorkspace(services);
    const computeBase = `${services.computeUrl}/data/workspace/bench/api/v1`;
    const fn = await call('POST', `${computeBase}/compute-functions`, {
      token,
      body: { name: 'echo', code: ENDPOINT_CODE },
    });
    if (fn.status !== 201) throw new Error(`function: ${fn.status} ${JSON.stringify(fn.body)}`);
    const trigger = await call('POST', `${computeBase}/function-triggers`, {
      token,
      body: {
        name: 'echo',
        functionId: fn.body.id,
        executionType: 'endpoint',
        triggerMetadata: { path: 'echo', auth: { mode: 'public' } },
      },
    });
    if (trigger.status !== 201) throw new Error(`trigger: ${trigger.status} ${JSON.stringify(trigger.body)}`);
    const viaGateway = `${gateway.url}/data/workspace/bench/api/v1/endpoints/echo`;
    const client = new BenchClient(token, CLIENTS);
    const measureBoth = async (total: number, concurrency: number) => {
      progress(`bare, ${concurrency} at a time`);
      await burst(client, bareUrl, WARMUP, concurrency);
      const b = await burst(client, bareUrl, total, concurrency);
      progress(`through the gateway, ${concurrency} at a time`);
      await burst(client, viaGateway, WARMUP, concurrency);
      const g = await burst(client, viaGateway, total, concurrency);
      return { bare: b, gateway: g };
    };
    const many = await measureBoth(CALLS, CLIENTS);
    const single = await measureBoth(SINGLE, 1);
    client.close();
    const lines = [
      `endpoint burst: ${CLIENTS} keep-alive clients, ${CALLS} calls of a trivial public endpoint; default settings ` +
        `(worker: ${isolates} endpoint isolates, the cores' default; rate limits lifted)`,
      line('bare node:http + engine', many.bare),
      line('strata, through the gateway', many.gateway),
      `  ratio: throughput ${(many.gateway.perSecond / many.bare.perSecond).toFixed(2)}x, p50 ${(many.gateway.p50 / many.bare.p50).toFixed(2)}x, p99 ${(many.gateway.p99 / many.bare.p99).toFixed(2)}x (target: no 503)`,
      '',
      `one call at a time (${SINGLE} calls after ${WARMUP})`,
      line('bare node:http + engine', single.bare),
      line('strata, through the gateway', single.gateway),
      `  ratio: p50 ${(single.gateway.p50 / single.bare.p50).toFixed(2)}x, p99 ${(single.gateway.p99 / single.bare.p99).toFixed(2)}x (target: p50 within 2x)`,
      '',
    ];
    process.stdout.write(lines.join('\n'));
  } finally {
    const child = gateway?.child;
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await bare?.close();
    await services.stop();
  }
}

await main();
