/**
 * `pnpm bench` → inbound: verified http-trigger arrivals, from the POST to the 202.
 *
 * Ours: `POST /data/workspace/bench/api/v1/http-trigger/hook` on the inbound service (its
 * own process; auth, data and the compute API beside it, no sandbox worker: the runs are
 * queued, not executed), each signed with a plain HMAC-SHA256 of the body. The inbound
 * service asks compute for the trigger, verifies the signature, seals and stores the
 * arrival, answers 202, then hands it to compute.
 *
 * Baseline: a bare `node:http` server in this process that reads the body, verifies the
 * same signature, seals the body and headers with the same key ring, inserts the same row
 * into `inbound.inbound_events` with `pg`, and answers 202. Its rows are written as
 * `dispatched` under a workspace of their own, so the inbound service's sweep leaves them
 * alone (written `received`, as before 2026-11-24, the sweep dispatched them in the
 * background while both sides were measured).
 *
 * Every call has a body of its own (the same size: an invoice id counting up) and its own
 * signature: a plain HMAC request sent again within INBOUND_HMAC_REPLAY_WINDOW_S is answered
 * as a duplicate and stores nothing (docs/inbound.md), so one body sent over and over would
 * measure duplicates. The bare server claims each signature too (the same row in
 * `inbound.signature_claims`, in its insert's statement), as the service does since
 * 2026-11-29.
 *
 * One call at a time (the 202's p50/p99), then `BENCH_INBOUND_CONCURRENCY` at a time
 * (arrivals per second) in `BENCH_INBOUND_ROUNDS` rounds per side, alternating between
 * the two, so that the machine's load changing during the run weighs on both; the ratio
 * is the median of the rounds' ratios. Target (issue 16): at least half the bare
 * server's throughput.
 */
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, request, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { KeyRing, newInboundEventId } from '@strata/crypto';
import { InboundConfig } from '@strata/inbound';
import { keyRingOf, loadConfig } from '@strata/platform';
import { eventually } from '@strata/testing';
import { call } from '@strata/testkit';
import { cpuPerOp, sampleCpu, type CpuSample } from './cpu.js';
import { measure } from './measure.js';
import { benchWorkspace, startUnlimitedServices } from './services.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const SAMPLES = env('BENCH_INBOUND_SAMPLES', 500);
const TOTAL = env('BENCH_INBOUND_CALLS', 3000);
const CONCURRENCY = env('BENCH_INBOUND_CONCURRENCY', 8);
const ROUNDS = env('BENCH_INBOUND_ROUNDS', 5);
const WARMUP = 100;
const SECRET = 'bench-signing-secret';
/** The body of the n-th call: every call's differs, and all have the same size. */
const bodyOf = (n: number) =>
  JSON.stringify({
    type: 'invoice.paid',
    id: `in_${String(n).padStart(12, '0')}`,
    amount: 4200,
    currency: 'eur',
    lines: [1, 2, 3],
  });
const BODY_BYTES = Buffer.byteLength(bodyOf(0));
/** Calls sent so far, by every poster of this run: each gets the next body. */
let sent = 0;

interface Stats {
  p50: number;
  p99: number;
}

function stats(values: number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

const ms = (v: number) => `${v.toFixed(2).padStart(7)} ms`;

/** A signed POST over kept-alive connections; resolves with the status. */
function poster(connections: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const send = (url: string) =>
    new Promise<number>((resolve, reject) => {
      const body = bodyOf(sent++);
      const signature = createHmac('sha256', SECRET).update(body).digest('hex');
      const req = request(
        url,
        {
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'x-signature': `sha256=${signature}`,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  return { send, close: () => agent.destroy() };
}

/** The bare server: read, verify, seal, insert (with the signature's claim), 202. */
async function bareServer(databaseUrl: string, ring: KeyRing, triggerId: string) {
  const db = new pg.Pool({ connectionString: databaseUrl, max: CONCURRENCY });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const presented = String(req.headers['x-signature'] ?? '').replace(/^sha256=/, '');
      const expected = createHmac('sha256', SECRET).update(body).digest();
      const given = Buffer.from(presented, 'hex');
      if (given.length !== 32 || !timingSafeEqual(given, expected)) {
        res.writeHead(401).end();
        return;
      }
      const id = newInboundEventId();
      const payload = ring.encrypt(body, `inbound.inbound_events:${id}:payload`);
      const headers = ring.encrypt(JSON.stringify(req.headers), `inbound.inbound_events:${id}:headers`);
      const claim = `hmac-sha256:${createHash('sha256').update(expected).digest('hex')}`;
      db.query(
        `WITH claimed AS (
           INSERT INTO inbound.signature_claims (workspace_slug, trigger_id, signature_key, inbound_event_id, claimed_at,
                                                 expires_at)
           VALUES ('bare', $2, $10, $1, now(), now() + interval '7 days') ON CONFLICT DO NOTHING)
         INSERT INTO inbound.inbound_events (id, workspace_slug, trigger_id, function_id, source_name, signature_result,
           signature_scheme, dispatch_status, correlation_id, payload, headers, key_version, content_type, body_bytes,
           job_id, received_at)
         VALUES ($1, 'bare', $2, NULL, 'hook', 'verified', 'hmac-sha256', 'dispatched', $3, $4, $5, $6, $7, $8, $9,
                 now())`,
        [
          id,
          triggerId,
          randomUUID(),
          payload,
          headers,
          KeyRing.versionOf(payload),
          req.headers['content-type'] ?? null,
          body.length,
          randomUUID(),
          claim,
        ],
      ).then(
        () => {
          res.writeHead(202, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ inboundEventId: id }));
        },
        () => res.writeHead(500).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await db.end();
    },
  };
}

/** One side of the comparison: a warm-up, then latency one at a time; `round` measures throughput. */
async function side(url: string) {
  const client = poster(CONCURRENCY);
  const once = async () => {
    const status = await client.send(url);
    if (status !== 202) throw new Error(`${url}: ${status}`);
  };
  for (let i = 0; i < WARMUP; i++) await once();
  const latencies: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t0 = performance.now();
    await once();
    latencies.push(performance.now() - t0);
  }
  return {
    latency: stats(latencies),
    round: async (n: number) => (await measure(n, CONCURRENCY, once)).perSecond,
    close: () => client.close(),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const services = await startUnlimitedServices({}, ['auth', 'data', 'compute', 'inbound']);
  try {
    const { token } = await benchWorkspace(services);
    const computeBase = `${services.computeUrl}/data/workspace/bench/api/v1`;
    const fn = await call('POST', `${computeBase}/compute-functions`, {
      token,
      body: { name: 'on-hook', code: 'async function run() { return { success: true }; }' },
    });
    const trigger = await call('POST', `${computeBase}/function-triggers`, {
      token,
      body: {
        name: 'hook',
        functionId: fn.body.id,
        executionType: 'http-trigger',
        triggerMetadata: { path: 'hook', validateSignature: true, signingSecret: SECRET },
      },
    });
    if (trigger.status !== 201) throw new Error(`trigger: ${JSON.stringify(trigger.body)}`);
    const ring = keyRingOf(loadConfig(InboundConfig, { ...process.env, STRATA_ENV: 'development' }));
    const bare = await bareServer(services.databaseUrl, ring, trigger.body.id);
    const bareSide = await side(bare.url);
    const oursSide = await side(`${services.inboundUrl}/data/workspace/bench/api/v1/http-trigger/hook`);
    // Throughput in alternating rounds, so a change in the machine's load between the two sides
    // shows in both; each side's figure is the median of its rounds, the ratio the median of the
    // rounds' ratios.
    // After each of our rounds, the run waits until compute has taken every arrival (none left
    // `received`), so no round pays for the one before, and the rate until then is reported too.
    const rates = { bare: [] as number[], ours: [] as number[], dispatched: [] as number[] };
    const undispatched = new pg.Pool({ connectionString: services.databaseUrl, max: 1 });
    const left = async () =>
      (
        await undispatched.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM inbound.inbound_events
            WHERE workspace_slug = 'bench' AND dispatch_status = 'received'`,
        )
      ).rows[0]!.n;
    const allDispatched = () => eventually(async () => ((await left()) === 0 ? true : undefined), 120_000, 5);
    const n = Math.ceil(TOTAL / ROUNDS);
    const cpu = () =>
      sampleCpu({
        inbound: services.pid('inbound'),
        compute: services.pid('compute'),
        auth: services.pid('auth'),
        data: services.pid('data'),
        bench: process.pid,
      });
    // CPU per arrival, summed over the counted rounds of each side (ours until every arrival is dispatched).
    const spent = { bare: new Map<string, number>(), ours: new Map<string, number>() };
    const addSpent = (into: Map<string, number>, before: CpuSample, after: CpuSample) => {
      for (const [group, ms] of after) into.set(group, (into.get(group) ?? 0) + ms - (before.get(group) ?? 0));
    };
    // A round per side first, not counted: the bare server's pool opens its connections there.
    await bareSide.round(n);
    await oursSide.round(n);
    await allDispatched();
    for (let r = 0; r < ROUNDS; r++) {
      const b0 = cpu();
      rates.bare.push(await bareSide.round(n));
      addSpent(spent.bare, b0, cpu());
      const o0 = cpu();
      const t0 = performance.now();
      rates.ours.push(await oursSide.round(n));
      await allDispatched();
      rates.dispatched.push(n / ((performance.now() - t0) / 1000));
      addSpent(spent.ours, o0, cpu());
    }
    await undispatched.end();
    bareSide.close();
    oursSide.close();
    await bare.close();
    const bareFigures = { latency: bareSide.latency, perSecond: median(rates.bare) };
    const ours = { latency: oursSide.latency, perSecond: median(rates.ours) };
    const roundRatios = rates.ours.map((o, r) => o / rates.bare[r]!);
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
    const lines = [
      `inbound: verified http-trigger arrivals (plain HMAC-SHA256, ${BODY_BYTES}-byte JSON bodies, each its own); services in their own processes, no sandbox worker`,
      `  ${SAMPLES} one at a time (after ${WARMUP}), then ${TOTAL} ${CONCURRENCY} at a time in ${ROUNDS} rounds per side, alternating`,
      `  bare node:http + verify + seal + pg INSERT   202 p50 ${ms(bareFigures.latency.p50)}  p99 ${ms(bareFigures.latency.p99)}  ${bareFigures.perSecond.toFixed(0).padStart(6)} arrivals/s`,
      `  strata /http-trigger/{path}                  202 p50 ${ms(ours.latency.p50)}  p99 ${ms(ours.latency.p99)}  ${ours.perSecond.toFixed(0).padStart(6)} arrivals/s (${median(rates.dispatched).toFixed(0)}/s until every one is dispatched)`,
      `  rounds, arrivals/s: bare ${rates.bare.map((x) => x.toFixed(0)).join(', ')}; strata ${rates.ours.map((x) => x.toFixed(0)).join(', ')}`,
      `  CPU ms per arrival, bare rounds:  ${cpuPerOp(new Map(), spent.bare, n * ROUNDS)}`,
      `  CPU ms per arrival, strata rounds (until dispatched): ${cpuPerOp(new Map(), spent.ours, n * ROUNDS)}`,
      `  ratio throughput ${median(roundRatios).toFixed(2)}x, median of ${ROUNDS} alternating rounds (${roundRatios.map((x) => x.toFixed(2)).join(', ')}; target: at least 0.5x); latency p50 ${ratio(ours.latency.p50, bareFigures.latency.p50)}`,
      '',
    ];
    process.stdout.write(lines.join('\n'));
  } finally {
    await services.stop();
  }
}

await main();
