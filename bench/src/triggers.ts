/**
 * `pnpm bench` → triggers: what a trigger adds on top of what it is triggered by.
 *
 * 1. Event-to-run: a record created through the data API, and the first line of an
 *    event-driven trigger's function (`Date.now()` in the isolate). Baseline: the same
 *    record event reaching a bare JetStream consumer in this process. Both measured from
 *    the record's `createdAt`, one record at a time.
 * 2. Endpoint: `POST /endpoints/{path}` (a public endpoint, so no credential check on
 *    either side) on the sandbox worker, where the gateway routes endpoint calls, and for
 *    comparison on the compute API (which hands the run to the worker over NATS); one call
 *    at a time (latency) and `BENCH_ENDPOINT_CONCURRENCY` at a time (throughput). Baseline: the same
 *    function behind a bare node:http server in this process calling the sandbox engine
 *    directly (same isolates, same limits); and, for what a server apart from its client
 *    pays (the wake-ups between processes every deployed server has), the same bare server
 *    in a child process (bare-endpoint.ts).
 * 3. Scheduler lateness: `BENCH_SCHEDULED_TRIGGERS` interval triggers (every
 *    `BENCH_SCHEDULE_INTERVAL_S` seconds), from each occurrence's due time to its run's
 *    first line, and to the run's queuedAt (the scheduler's own part). Baseline: as many
 *    `setTimeout` timers in this process, due at the same spread, from due to callback.
 *
 * Targets (issue 15): event-to-run within 2x the bare event latency; endpoint p50 within
 * 2x the bare server's; scheduler lateness p99 under 1 s.
 */
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { call } from '@strata/testkit';
import { bareEndpointServer, ENDPOINT_CODE, spawnBareEndpointServer } from './bare-endpoint.js';
import { BenchClient } from './http.js';
import { measure } from './measure.js';
import { benchWorkspace, startUnlimitedServices } from './services.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const EVENT_SAMPLES = env('BENCH_EVENT_SAMPLES', 200);
const ENDPOINT_SAMPLES = env('BENCH_ENDPOINT_SAMPLES', 500);
const ENDPOINT_CALLS = env('BENCH_ENDPOINT_CALLS', 2000);
const ISOLATES = env('BENCH_COMPUTE_ISOLATES', 2);
/** Calls at once in the throughput pass: as many as the worker has endpoint isolates (more wait in its queue: endpoint-burst.ts). */
const ENDPOINT_CONCURRENCY = env('BENCH_ENDPOINT_CONCURRENCY', ISOLATES);
const SCHEDULED = env('BENCH_SCHEDULED_TRIGGERS', 1000);
const INTERVAL_S = env('BENCH_SCHEDULE_INTERVAL_S', 30);
const WARMUP = 30;

const EVENT_CODE = `async function run() {
  const at = Date.now();
  return { success: true, data: { at, recordId: executionParams.recordId } };
}`;
const SCHEDULED_CODE = `async function run() {
  const at = Date.now();
  return { success: true, data: { at, scheduledFor: executionParams.scheduledFor } };
}`;

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

const ms = (v: number) => `${v.toFixed(2).padStart(8)} ms`;
const pp = (s: Stats) => `p50 ${ms(s.p50)}  p99 ${ms(s.p99)}  (n ${s.n})`;
const ratio = (ours: number, baseline: number) => `${(ours / baseline).toFixed(2)}x`;
const sleep = (t: number) => new Promise((resolve) => setTimeout(resolve, t));

async function expectCreated(what: string, answer: Promise<{ status: number; body: any }>) {
  const done = await answer;
  if (done.status !== 201 && done.status !== 200)
    throw new Error(`${what}: ${done.status} ${JSON.stringify(done.body)}`);
  return done.body;
}

/** One call at a time, then `concurrency` at a time; each answer checked. */
async function timeEndpoint(client: BenchClient, url: string) {
  const once = async (n: number) => {
    const res = await client.send('POST', url, { n });
    const body = res.body as { n?: number } | undefined;
    if (res.status !== 200 || body?.n !== n) throw new Error(`${url}: ${res.status} ${JSON.stringify(res.body)}`);
  };
  for (let i = 0; i < WARMUP * 3; i++) await once(i);
  const latencies: number[] = [];
  for (let i = 0; i < ENDPOINT_SAMPLES; i++) {
    const t0 = performance.now();
    await once(i);
    latencies.push(performance.now() - t0);
  }
  let next = 0;
  const throughput = await measure(ENDPOINT_CALLS, ENDPOINT_CONCURRENCY, () => once(next++));
  return { latency: stats(latencies), perSecond: throughput.perSecond };
}

async function main(): Promise<void> {
  const services = await startUnlimitedServices(
    { COMPUTE_WORKER_ISOLATES: String(ISOLATES), COMPUTE_WORKER_ENDPOINT_ISOLATES: String(ISOLATES) },
    ['auth', 'data', 'compute', 'worker'],
  );
  const db = new pg.Pool({ connectionString: services.databaseUrl, max: 2 });
  const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
  const bare = await bareEndpointServer(ISOLATES);
  const bareApart = await spawnBareEndpointServer(ISOLATES);
  try {
    const { token, base: dataBase } = await benchWorkspace(services);
    const computeBase = `${services.computeUrl}/data/workspace/bench/api/v1`;
    const post = (url: string, body: unknown) => call('POST', url, { token, body });

    // ---- 1. event to run ----
    const collection = await expectCreated(
      'collection',
      post(`${dataBase}/structures`, {
        name: 'Pings',
        recordSlug: 'pings',
        properties: [{ name: 'n', type: 'number' }],
      }),
    );
    const onPing = await expectCreated(
      'function',
      post(`${computeBase}/compute-functions`, { name: 'on-ping', code: EVENT_CODE }),
    );
    const trigger = await expectCreated(
      'trigger',
      post(`${computeBase}/function-triggers`, {
        name: 'on-ping',
        functionId: onPing.id,
        executionType: 'event-driven',
        triggerMetadata: { event: 'record_created', recordSlug: 'pings' },
      }),
    );
    const arrivals = new Map<string, number>();
    // An ephemeral pull consumer like the compute service's (the NATS server here predates filter_subjects).
    const stream = `${services.natsPrefix}_records`;
    const info = await (
      await jetstreamManager(nc)
    ).consumers.add(stream, {
      filter_subject: `${services.natsPrefix}.records.bench.pings.record_created`,
      deliver_policy: DeliverPolicy.New,
      ack_policy: AckPolicy.None,
      inactive_threshold: 60_000_000_000,
    });
    const consumer = await jetstream(nc).consumers.get(stream, info.name);
    const messages = await consumer.consume();
    void (async () => {
      for await (const msg of messages) {
        const at = Date.now();
        const event = msg.json<{ recordId: string }>();
        arrivals.set(event.recordId, at);
      }
    })();
    const runFirstLines = async (): Promise<Map<string, number>> => {
      const { rows } = await db.query<{ r: string }>(
        `SELECT return_value AS r FROM compute.runs WHERE trigger_id = $1 AND status = 'succeeded'`,
        [trigger.id],
      );
      return new Map(
        rows.map(({ r }) => {
          const data = (JSON.parse(r) as { data: { at: number; recordId: string } }).data;
          return [data.recordId, data.at];
        }),
      );
    };
    const eventLatency: number[] = [];
    const runLatency: number[] = [];
    for (let i = 0; i < WARMUP + EVENT_SAMPLES; i++) {
      const record = await post(`${dataBase}/records`, { structureId: collection.id, data: { n: i } });
      if (record.status >= 300) throw new Error(`record: ${record.status} ${JSON.stringify(record.body)}`);
      const id: string = record.body.id;
      const createdAt = Date.parse(record.body.createdAt);
      const deadline = Date.now() + 30_000;
      let firstLine: number | undefined;
      while (firstLine === undefined || !arrivals.has(id)) {
        if (Date.now() > deadline) throw new Error(`record ${id}: no run or no event within 30 s`);
        await sleep(5);
        firstLine = (await runFirstLines()).get(id);
      }
      if (i < WARMUP) continue;
      eventLatency.push(arrivals.get(id)! - createdAt);
      runLatency.push(firstLine - createdAt);
    }
    await messages.close();
    const event = stats(eventLatency);
    const run = stats(runLatency);

    // ---- 2. endpoint ----
    const echo = await expectCreated(
      'function',
      post(`${computeBase}/compute-functions`, { name: 'echo', code: ENDPOINT_CODE }),
    );
    await expectCreated(
      'endpoint',
      post(`${computeBase}/function-triggers`, {
        name: 'echo',
        functionId: echo.id,
        executionType: 'endpoint',
        triggerMetadata: { path: 'echo', auth: { mode: 'public' } },
      }),
    );
    const client = new BenchClient(token, ENDPOINT_CONCURRENCY);
    const bareFigures = await timeEndpoint(client, bare.url);
    const bareApartFigures = await timeEndpoint(client, bareApart.url);
    const strataFigures = await timeEndpoint(
      client,
      `${services.workerUrl}/data/workspace/bench/api/v1/endpoints/echo`,
    );
    const viaApiFigures = await timeEndpoint(client, `${computeBase}/endpoints/echo`);
    client.close();

    // ---- 3. scheduler lateness ----
    const tick = await expectCreated(
      'function',
      post(`${computeBase}/compute-functions`, { name: 'tick', code: SCHEDULED_CODE }),
    );
    const creation = new BenchClient(token, 8);
    const createdFrom = Date.now();
    let made = 0;
    await measure(SCHEDULED, 8, async () => {
      const n = made++;
      const res = await creation.send('POST', `${computeBase}/function-triggers`, {
        name: `tick-${n}`,
        functionId: tick.id,
        executionType: 'scheduled',
        triggerMetadata: { scheduleType: 'interval', interval: INTERVAL_S },
      });
      if (res.status !== 201) throw new Error(`scheduled trigger: ${res.status} ${JSON.stringify(res.body)}`);
    });
    creation.close();
    const creationSpanMs = Date.now() - createdFrom;
    // Baseline: timers due at the same spread, from due to callback.
    const timerLateness: number[] = [];
    await Promise.all(
      Array.from({ length: SCHEDULED }, (_, i) => {
        const due = Date.now() + (i * creationSpanMs) / SCHEDULED;
        return new Promise<void>((resolve) =>
          setTimeout(() => {
            timerLateness.push(Date.now() - due);
            resolve();
          }, due - Date.now()),
        );
      }),
    );
    // Every trigger fires once at createdAt + interval; wait for all of the first round.
    const deadline = Date.now() + INTERVAL_S * 1000 + creationSpanMs + 60_000;
    let fired: { at: number; scheduledFor: string; queued: Date }[] = [];
    while (fired.length < SCHEDULED) {
      if (Date.now() > deadline) throw new Error(`${fired.length} of ${SCHEDULED} scheduled runs finished`);
      await sleep(1000);
      const { rows } = await db.query<{ r: string; queued_at: Date }>(
        `SELECT DISTINCT ON (r.trigger_id) r.return_value AS r, r.queued_at
           FROM compute.runs r JOIN compute.triggers t ON t.id = r.trigger_id
          WHERE t.function_id = $1 AND r.status = 'succeeded'
          ORDER BY r.trigger_id, r.queued_at`,
        [tick.id],
      );
      fired = rows.map(({ r, queued_at }) => ({
        ...(JSON.parse(r) as { data: { at: number; scheduledFor: string } }).data,
        queued: queued_at,
      }));
    }
    const toFirstLine = stats(fired.map((f) => f.at - Date.parse(f.scheduledFor)));
    const toQueued = stats(fired.map((f) => f.queued.getTime() - Date.parse(f.scheduledFor)));
    const timers = stats(timerLateness);

    const lines = [
      `triggers: services in their own processes (worker: ${ISOLATES} background + ${ISOLATES} endpoint isolates)`,
      '',
      `1. event to run: record created (its createdAt) → the function's first line, one record at a time (${EVENT_SAMPLES} after ${WARMUP})`,
      `  bare JetStream consumer (the record event)   ${pp(event)}`,
      `  event-driven trigger (the run's first line)  ${pp(run)}`,
      `  ratio p50 ${ratio(run.p50, event.p50)}, p99 ${ratio(run.p99, event.p99)} (target: within 2x at p50)`,
      '',
      `2. endpoint: POST {"n"} → the function's answer (a public endpoint; ${ENDPOINT_SAMPLES} calls one at a time, then ${ENDPOINT_CALLS} calls ${ENDPOINT_CONCURRENCY} at a time)`,
      `  bare node:http + sandbox engine   ${pp(bareFigures.latency)}  ${bareFigures.perSecond.toFixed(0).padStart(6)} calls/s (in the bench's own process)`,
      `  the same in a process of its own  ${pp(bareApartFigures.latency)}  ${bareApartFigures.perSecond.toFixed(0).padStart(6)} calls/s`,
      `  strata /endpoints/{path} (worker) ${pp(strataFigures.latency)}  ${strataFigures.perSecond.toFixed(0).padStart(6)} calls/s`,
      `  the same on the compute API       ${pp(viaApiFigures.latency)}  ${viaApiFigures.perSecond.toFixed(0).padStart(6)} calls/s (the API's route, over NATS)`,
      `  ratio latency p50 ${ratio(strataFigures.latency.p50, bareFigures.latency.p50)}, p99 ${ratio(strataFigures.latency.p99, bareFigures.latency.p99)}; ` +
        `throughput ${ratio(strataFigures.perSecond, bareFigures.perSecond)} (target: p50 within 2x)`,
      `  against the bare server in a process of its own: p50 ${ratio(strataFigures.latency.p50, bareApartFigures.latency.p50)}, ` +
        `p99 ${ratio(strataFigures.latency.p99, bareApartFigures.latency.p99)}; throughput ${ratio(strataFigures.perSecond, bareApartFigures.perSecond)}`,
      '',
      `3. scheduler: ${SCHEDULED} interval triggers every ${INTERVAL_S} s (created over ${(creationSpanMs / 1000).toFixed(1)} s), the first occurrence of each`,
      `  bare setTimeout, same spread          ${pp(timers)}`,
      `  due → run queued (the scheduler)      ${pp(toQueued)}`,
      `  due → the function's first line       ${pp(toFirstLine)}`,
      `  p99 ${ms(toFirstLine.p99)} (target: under 1000 ms); ratio to bare timers p99 ${ratio(toFirstLine.p99, Math.max(1, timers.p99))}`,
      '',
    ];
    process.stdout.write(lines.join('\n'));
  } finally {
    await bare.close();
    await bareApart.close();
    await nc.close();
    await db.end();
    await services.stop();
  }
}

await main();
