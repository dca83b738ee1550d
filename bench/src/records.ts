/**
 * `pnpm bench` → record creates through the data service (HTTP, validation,
 * unique index, version row, changelog, outbox) against a baseline measured in
 * the same run: the same record, version and outbox rows inserted with plain
 * `pg` from one Node process, one transaction per record, same concurrency.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { call } from '@strata/testkit';
import { BenchClient } from './http.js';
import { cpuPerOp, sampleCpu } from './cpu.js';
import { describe, measure } from './measure.js';
import { benchWorkspace, startUnlimitedServices } from './services.js';

const TOTAL = Number(process.env['BENCH_RECORDS'] ?? 5000);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 8);
// Both sides warm up first: the figures are steady-state throughput, after the JIT compiled the hot paths.
const WARMUP = 1000;

const PROPERTIES = [
  { name: 'email', type: 'string', required: true, isUnique: true, maxLength: 200 },
  { name: 'name', type: 'string', required: true, maxLength: 100 },
  { name: 'age', type: 'number', minimum: 0, maximum: 150 },
  { name: 'active', type: 'boolean', default: true },
  { name: 'joinedAt', type: 'datetime' },
  { name: 'tier', type: 'string', enum: ['free', 'pro', 'team'], default: 'free' },
  { name: 'score', type: 'number', multipleOf: 0.5 },
  { name: 'tags', type: 'array', items: { type: 'string' }, maxItems: 10 },
  {
    name: 'address',
    type: 'object',
    properties: [
      { name: 'city', type: 'string' },
      { name: 'zip', type: 'string' },
    ],
  },
  { name: 'notes', type: 'string', maxLength: 2000 },
];

function recordData(i: number, run: string): Record<string, unknown> {
  return {
    email: `user-${run}-${i}@example.com`,
    name: `User ${i}`,
    age: 20 + (i % 50),
    joinedAt: '2026-01-01T00:00:00Z',
    tier: ['free', 'pro', 'team'][i % 3],
    score: (i % 20) / 2,
    tags: ['a', 'b'],
    address: { city: 'Oslo', zip: '0150' },
    notes: 'x'.repeat(200),
  };
}

async function main(): Promise<void> {
  // The webhooks service would consume every record event on the same cores: not part of a create.
  const services = await startUnlimitedServices({}, ['auth', 'data']);
  const db = new pg.Pool({ connectionString: services.databaseUrl, max: CONCURRENCY });
  try {
    const ws = 'bench';
    const { token, base } = await benchWorkspace(services);
    const created = await call('POST', `${base}/structures`, {
      token,
      body: { name: 'People', enableVersioning: true, properties: PROPERTIES },
    });
    if (created.status !== 200) throw new Error(`collection: ${JSON.stringify(created.body)}`);
    const structureId = created.body.id as string;

    const http = new BenchClient(token, CONCURRENCY);
    const viaService = (run: string) => async (i: number) => {
      const res = await http.send('POST', `${base}/records`, { structureId, data: recordData(i, run) });
      if (res.status !== 201) throw new Error(`record ${i}: ${res.status} ${JSON.stringify(res.body)}`);
    };
    const baseline = (run: string) => async (i: number) => {
      const client = await db.connect();
      try {
        const id = randomUUID();
        const data = recordData(i, run);
        await client.query('BEGIN');
        await client.query(
          `INSERT INTO data.records (id, workspace_slug, collection_id, data, created_by, updated_by)
           VALUES ($1, $2, $3, $4, 'bench', 'bench')`,
          [id, ws, structureId, data],
        );
        await client.query(
          `INSERT INTO data.record_versions (record_id, version, data, changes, updated_by, updated_at)
           VALUES ($1, 1, $2, '{}', 'bench', now())`,
          [id, data],
        );
        await client.query(`INSERT INTO data.outbox (id, subject, payload) VALUES ($1, $2, $3)`, [
          randomUUID(),
          `bench.records.${ws}.people.record_created`,
          { event: 'record_created', recordId: id, data },
        ]);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    };

    await measure(WARMUP, CONCURRENCY, viaService('warm'));
    const cpu = () => sampleCpu({ data: services.pid('data'), auth: services.pid('auth'), bench: process.pid });
    const cpuBefore = cpu();
    const ours = await measure(TOTAL, CONCURRENCY, viaService('ours'));
    const oursCpu = cpuPerOp(cpuBefore, cpu(), TOTAL);
    // The baseline runs alone: no service process competes for the cores, and no relay
    // picks up its outbox rows (which nothing is meant to publish).
    await services.stopApp('data');
    await measure(WARMUP, CONCURRENCY, baseline('warm-base'));
    const baseBefore = cpu();
    const base_ = await measure(TOTAL, CONCURRENCY, baseline('base'));
    const baseCpu = cpuPerOp(baseBefore, cpu(), TOTAL);
    process.stdout.write(
      [
        `records/create  ${TOTAL} records, concurrency ${CONCURRENCY}, 10 properties (1 unique), versioning on; services in their own processes`,
        `  data service  ${describe(ours)}`,
        `  baseline pg   ${describe(base_)}`,
        `  CPU ms per record, data service run: ${oursCpu}`,
        `  CPU ms per record, baseline run:     ${baseCpu}`,
        `  ratio (ours / baseline): throughput ${(ours.perSecond / base_.perSecond).toFixed(2)}, p50 ${(ours.p50Ms / base_.p50Ms).toFixed(2)}, p99 ${(ours.p99Ms / base_.p99Ms).toFixed(2)}`,
        '',
      ].join('\n'),
    );
    http.close();
  } finally {
    await db.end();
    await services.stop();
  }
}

await main();
