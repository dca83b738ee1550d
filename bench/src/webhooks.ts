/**
 * `pnpm bench` → webhook deliveries: from a record's commit (its createdAt, on the
 * database clock) to the signed POST's arrival at a local receiver, through the
 * data service's outbox, JetStream, the webhooks consumer and dispatcher. The
 * baseline, measured in the same run: the same signed POSTs sent to the same
 * receiver by a plain loop in one process (keep-alive, same concurrency).
 *
 * Two phases each: throughput (a backlog of events, deliveries per second from the
 * first arrival to the last) and latency (one event at a time, p50/p99).
 */
import { createServer, Agent, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { generateWebhookSecret, signWebhook } from '@strata/crypto';
import { call } from '@strata/testkit';
import { eventually } from '@strata/testing';
import { benchWorkspace, startUnlimitedServices } from './services.js';

const TOTAL = Number(process.env['BENCH_WEBHOOKS'] ?? 2000);
const LATENCY_SAMPLES = Number(process.env['BENCH_WEBHOOK_SAMPLES'] ?? 200);
const CONCURRENCY = 64;
const BATCH = 500;

interface Receiver {
  readonly url: string;
  /** Arrival time (ms since the epoch) by key: the record id of our bodies, webhook-id of the baseline's. */
  readonly arrivals: Map<string, number>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const arrivals = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.timeOrigin + performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { recordId?: string };
      arrivals.set(body.recordId ?? String(req.headers['webhook-id']), at);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    arrivals,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

interface Figures {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** The baseline: signed POSTs from a plain loop. */
async function baseline(receiver: Receiver): Promise<Figures> {
  const secret = generateWebhookSecret();
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const body = (i: number) =>
    JSON.stringify({
      event: 'record_created',
      workspaceSlug: 'bench',
      recordSlug: 'orders',
      data: { id: `b-${i}`, recordSlug: 'orders', data: { title: `order ${i}`, total: i } },
      timestamp: new Date().toISOString(),
      createdBy: 'bench',
    });
  const send = (id: string, payload: string) =>
    new Promise<void>((resolve, reject) => {
      const ts = String(Math.floor(Date.now() / 1000));
      const signature = signWebhook([secret], id, ts, payload);
      const req = request(receiver.url, {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': ts,
          'webhook-signature': signature,
          'Svc-Id': id,
          'Svc-Timestamp': ts,
          'Svc-Signature': signature,
          'Svc-Event-Type': 'record_created',
        },
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
      req.end(payload);
    });

  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < TOTAL; i = next++) await send(randomUUID(), body(i));
    }),
  );
  const perSecond = TOTAL / ((performance.now() - started) / 1000);

  const latencies: number[] = [];
  for (let i = 0; i < LATENCY_SAMPLES; i++) {
    const id = randomUUID();
    const sent = performance.timeOrigin + performance.now();
    await send(id, body(i));
    latencies.push(receiver.arrivals.get(id)! - sent);
  }
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { perSecond, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99) };
}

async function ours(receiver: Receiver): Promise<Figures> {
  const services = await startUnlimitedServices({ WEBHOOKS_ALLOW_PRIVATE_RECEIVERS: 'true' });
  try {
    const { token, base } = await benchWorkspace(services);
    const collection = await call('POST', `${base}/structures`, {
      token,
      body: {
        name: 'Orders',
        properties: [
          { name: 'title', type: 'string' },
          { name: 'total', type: 'number' },
        ],
      },
    });
    const subscription = await call(
      'POST',
      `${services.webhooksUrl}/data/workspace/bench/api/v1/webhook-subscriptions`,
      {
        token,
        body: { name: 'bench', url: receiver.url, events: ['record_created'] },
      },
    );
    if (subscription.status !== 201) throw new Error(`subscription: ${JSON.stringify(subscription.body)}`);
    const structureId = collection.body.id as string;

    // Throughput: a backlog of record_created events (batches emit one per record) waits in
    // JetStream while the webhooks service is stopped; then it starts and drains it.
    await services.stopApp('webhooks');
    const created: { id: string }[] = [];
    for (let done = 0; done < TOTAL; done += BATCH) {
      const res = await call('POST', `${base}/records/batch`, {
        token,
        body: {
          structureId,
          records: Array.from({ length: Math.min(BATCH, TOTAL - done) }, (_, i) => ({
            data: { title: `order ${done + i}`, total: done + i },
          })),
        },
      });
      if (res.status !== 200 && res.status !== 201) throw new Error(`batch: ${JSON.stringify(res.body)}`);
      created.push(...(res.body.records as { id: string }[]));
    }
    await services.startApp('webhooks');
    await eventually(() => (created.every((r) => receiver.arrivals.has(r.id)) ? true : undefined), 300_000, 20);
    const times = created.map((r) => receiver.arrivals.get(r.id)!);
    const perSecond = (TOTAL - 1) / ((Math.max(...times) - Math.min(...times)) / 1000);

    // Latency: one event at a time, commit to arrival.
    const latencies: number[] = [];
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const res = await call('POST', `${base}/records`, {
        token,
        body: { structureId, data: { title: 'one', total: i } },
      });
      const record = res.body as { id: string; createdAt: string };
      const arrived = await eventually(() => receiver.arrivals.get(record.id), 30_000, 1);
      latencies.push(arrived - Date.parse(record.createdAt));
    }
    latencies.sort((a, b) => a - b);
    return { perSecond, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99) };
  } finally {
    await services.stop();
  }
}

async function main(): Promise<void> {
  const receiver = await startReceiver();
  try {
    const plain = await baseline(receiver);
    const strata = await ours(receiver);
    const line = (name: string, f: Figures) =>
      `${name.padEnd(28)} ${f.perSecond.toFixed(0).padStart(6)} deliveries/s  p50 ${f.p50Ms.toFixed(2).padStart(7)} ms  p99 ${f.p99Ms.toFixed(2).padStart(7)} ms`;
    process.stdout.write(`webhook deliveries (${TOTAL} from a backlog, ${LATENCY_SAMPLES} one at a time)\n`);
    process.stdout.write(`${line('plain signed POST loop', plain)}\n`);
    process.stdout.write(`${line('strata (commit → arrival)', strata)}\n`);
    process.stdout.write(
      `ratio: throughput ${(strata.perSecond / plain.perSecond).toFixed(2)}x of the baseline; ` +
        `latency p50 ${(strata.p50Ms / plain.p50Ms).toFixed(1)}x, p99 ${(strata.p99Ms / plain.p99Ms).toFixed(1)}x\n`,
    );
  } finally {
    await receiver.close();
  }
}

await main();
