/**
 * `pnpm bench` → the gateway hop: N keep-alive requests from a few concurrent
 * clients to a trivial upstream (a plain node:http server answering a small
 * JSON, standing in for a service), once through the gateway and once
 * directly, in the same run. The gateway runs as `npm start` runs it (its own
 * process, `node --enable-source-maps dist/main.js`, telemetry as configured),
 * every service URL pointing at the upstream; its CPU per request is read from
 * /proc. Extra node flags for the gateway (e.g. `--cpu-prof`):
 * `BENCH_GATEWAY_NODE_ARGS`; another build of the gateway (an earlier one, to
 * compare): `BENCH_GATEWAY_MAIN`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { BenchClient } from './http.js';
import { measure, type Measurement } from './measure.js';
import { sampleCpu } from './cpu.js';

const TOTAL = Number(process.env['BENCH_GATEWAY_REQUESTS'] ?? 10_000);
const CONCURRENCY = Number(process.env['BENCH_GATEWAY_CONCURRENCY'] ?? 8);
const GATEWAY_MAIN =
  process.env['BENCH_GATEWAY_MAIN'] ?? fileURLToPath(new URL('../../apps/gateway/dist/main.js', import.meta.url));
const ANSWER = JSON.stringify({ id: '0192f7a4-5b7e-7c1d-9a3e-2f4b6c8d0e1f', title: 'hello', done: false });
const BODY = { title: 'hello', done: false, priority: 3 };
const PATH = '/data/workspace/bench/api/v1/collections/tasks/records';

async function listenOnFreePort(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** The stand-in service: reads the body, answers a small JSON, keeps connections alive. */
async function startUpstream(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(req.method === 'POST' ? 201 : 200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(ANSWER),
      });
      res.end(ANSWER);
    });
  });
  server.keepAliveTimeout = 65_000;
  return { server, url: `http://127.0.0.1:${await listenOnFreePort(server)}` };
}

async function freePort(): Promise<number> {
  const probe = createServer();
  const port = await listenOnFreePort(probe);
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function startGateway(upstream: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  // As `npm start` runs it locally (its published development key is accepted there).
  const env: NodeJS.ProcessEnv = { STRATA_ENV: 'development', ...process.env, GATEWAY_PORT: String(port) };
  for (const name of ['AUTH', 'DATA', 'COMPUTE', 'COMPUTE_WORKER', 'ORCHESTRATION', 'WEBHOOKS', 'INBOUND']) {
    env[`${name}_SERVICE_URL`] = upstream;
  }
  const extra = (process.env['BENCH_GATEWAY_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...extra, '--enable-source-maps', GATEWAY_MAIN], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the gateway exited (${code}) before listening`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

async function run(base: string): Promise<Measurement> {
  const client = new BenchClient('bench-token', CONCURRENCY);
  try {
    // Warm-up: connections opened, code optimized, before anything is measured.
    await measure(Math.min(1000, TOTAL), CONCURRENCY, () => send(client, base));
    return await measure(TOTAL, CONCURRENCY, () => send(client, base));
  } finally {
    client.close();
  }
}

async function send(client: BenchClient, base: string): Promise<void> {
  const answer = await client.send('POST', `${base}${PATH}`, BODY);
  if (answer.status !== 201) throw new Error(`unexpected status ${answer.status}`);
}

function line(label: string, m: Measurement): string {
  return `${label.padEnd(16)} ${m.perSecond.toFixed(0).padStart(6)} req/s  p50 ${m.p50Ms.toFixed(2).padStart(6)} ms  p99 ${m.p99Ms.toFixed(2).padStart(6)} ms`;
}

async function main(): Promise<void> {
  const upstream = await startUpstream();
  const gateway = await startGateway(upstream.url);
  try {
    const direct = await run(upstream.url);
    const pid = gateway.child.pid;
    const before = sampleCpu({ gateway: pid }).get('gateway') ?? 0;
    const usage = process.cpuUsage();
    const through = await run(gateway.url);
    const gatewayMs = (sampleCpu({ gateway: pid }).get('gateway') ?? 0) - before;
    const spent = process.cpuUsage(usage);
    const benchMs = (spent.user + spent.system) / 1000;
    // The warm-up requests are part of the gateway's CPU between the samples.
    const requests = TOTAL + Math.min(1000, TOTAL);
    console.log(`gateway hop: ${TOTAL} POSTs of a small JSON, ${CONCURRENCY} keep-alive clients`);
    console.log(line('direct', direct));
    console.log(line('through gateway', through));
    console.log(
      `gateway CPU ${(gatewayMs / requests).toFixed(3)} ms/request (bench process: client + upstream ${(benchMs / requests).toFixed(3)} ms)`,
    );
    console.log(
      `ratio (through/direct): throughput ${(through.perSecond / direct.perSecond).toFixed(2)}x, p50 ${(through.p50Ms / direct.p50Ms).toFixed(2)}x`,
    );
  } finally {
    gateway.child.kill('SIGTERM');
    await new Promise((resolve) => gateway.child.once('exit', resolve));
    upstream.server.closeAllConnections();
    upstream.server.close();
  }
}

await main();
