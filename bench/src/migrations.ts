/**
 * `pnpm bench` → a collection migration (docs/data.md, "Migrations"): a property's type
 * changes (string → number) on a collection of BENCH_MIGRATION_RECORDS records (200,000 by
 * default) while BENCH_CONCURRENCY clients (8) keep writing to it (PATCH of a record, then a
 * create, in turn). Prints how long the migration took, and the writers' throughput and
 * p50/p99 during it against the same writers without a migration in the same run (the
 * baseline), with their ratios. Checks that no write was refused and no record lost.
 */
import pg from 'pg';
import { call } from '@strata/testkit';
import { eventually } from '@strata/testing';
import { BenchClient } from './http.js';
import { describe, measure, type Measurement } from './measure.js';
import { benchWorkspace, startUnlimitedServices } from './services.js';

const RECORDS = Number(process.env['BENCH_MIGRATION_RECORDS'] ?? 200_000);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 8);
const BASELINE_OPS = Number(process.env['BENCH_MIGRATION_BASELINE_OPS'] ?? 4000);
const BATCH = process.env['BENCH_MIGRATION_BATCH_SIZE'] ?? '500';
/** One record in a thousand holds a value that does not convert: the job lists it. */
const BAD_EVERY = 1000;

/** Writers until `done()` says stop: latencies of every write, and the writes refused. */
async function writeUntil(
  done: () => boolean,
  op: (i: number) => Promise<boolean>,
): Promise<{ m: Measurement; refused: number }> {
  const latencies: number[] = [];
  let next = 0;
  let refused = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (!done()) {
        const t0 = performance.now();
        if (!(await op(next++))) refused++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  const total = latencies.length;
  return { m: { total, seconds, perSecond: total / seconds, p50Ms: at(0.5), p99Ms: at(0.99) }, refused };
}

async function main(): Promise<void> {
  const services = await startUnlimitedServices({ DATA_MIGRATION_BATCH_SIZE: BATCH }, ['auth', 'data']);
  const db = new pg.Pool({ connectionString: services.databaseUrl, max: 2 });
  try {
    const { token, base } = await benchWorkspace(services);
    const created = await call('POST', `${base}/structures`, {
      token,
      body: {
        name: 'Readings',
        properties: [
          { name: 'amount', type: 'string' },
          { name: 'seq', type: 'number' },
          { name: 'note', type: 'string', maxLength: 200 },
        ],
      },
    });
    if (created.status !== 200) throw new Error(`collection: ${JSON.stringify(created.body)}`);
    const structureId = created.body.id as string;
    // Seeded in SQL: the API's bulk create would take longer than the migration itself.
    await db.query(
      `INSERT INTO data.records (id, workspace_slug, collection_id, data, created_by, updated_by)
       SELECT gen_random_uuid(), 'bench', $1,
              jsonb_build_object('amount', CASE WHEN g % $3 = 0 THEN 'n/a' ELSE (g + 0.5)::text END, 'seq', 0, 'note', 'seeded'),
              'bench', 'bench'
         FROM generate_series(1, $2) g`,
      [structureId, RECORDS, BAD_EVERY],
    );
    await db.query('ANALYZE data.records');
    const targets = (
      await db.query<{ id: string }>(
        `SELECT id FROM data.records WHERE collection_id = $1 AND data->>'amount' <> 'n/a' ORDER BY random() LIMIT 20000`,
        [structureId],
      )
    ).rows.map((r) => r.id);

    const http = new BenchClient(token, CONCURRENCY);
    let createdCount = 0;
    // A write valid under both definitions: a PATCH of `seq` (the stored `amount` is converted
    // on the way while the job has not reached the record), or a create without `amount`.
    const write = async (i: number): Promise<boolean> => {
      if (i % 2 === 0) {
        const res = await http.send('PATCH', `${base}/records/${targets[i % targets.length]}`, { data: { seq: i } });
        return res.status === 200;
      }
      const res = await http.send('POST', `${base}/records`, { structureId, data: { seq: i, note: 'written' } });
      if (res.status === 201) createdCount++;
      return res.status === 201;
    };

    await measure(1000, CONCURRENCY, async (i) => {
      await write(i);
    });
    const baselineRefused = { n: 0 };
    const baseline = await measure(BASELINE_OPS, CONCURRENCY, async (i) => {
      if (!(await write(i))) baselineRefused.n++;
    });

    const t0 = performance.now();
    const put = await call('PUT', `${base}/structures/${structureId}`, {
      token,
      body: {
        properties: [
          { name: 'amount', type: 'number' },
          { name: 'seq', type: 'number' },
          { name: 'note', type: 'string', maxLength: 200 },
        ],
      },
    });
    if (put.status !== 200) throw new Error(`change: ${JSON.stringify(put.body)}`);
    const switchMs = performance.now() - t0;
    const jobId = put.body.metadata.migrationJobId as string;
    let job: { finishedAt?: string; status: string; progress: Record<string, number> } | undefined;
    let over = false;
    const poll = (async () => {
      job = await eventually(
        async () => {
          const res = await call('GET', `${base}/structures/${structureId}/migrations/${jobId}`, { token });
          return res.body.finishedAt ? res.body : undefined;
        },
        3_600_000,
        250,
      );
      over = true;
    })();
    const during = await writeUntil(() => over, write);
    await poll;
    const migrationSeconds = (performance.now() - t0) / 1000;

    const [{ rows: left }, { rows: total }] = await Promise.all([
      db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM data.records WHERE collection_id = $1 AND jsonb_typeof(data->'amount') = 'string'`,
        [structureId],
      ),
      db.query<{ n: number }>('SELECT count(*)::int AS n FROM data.records WHERE collection_id = $1', [structureId]),
    ]);
    const bad = Math.floor(RECORDS / BAD_EVERY);
    const problems = [
      ...(job?.status !== 'completed' ? [`job ${job?.status}`] : []),
      ...(during.refused + baselineRefused.n ? [`${during.refused + baselineRefused.n} writes refused`] : []),
      ...(left[0]!.n !== bad ? [`${left[0]!.n} records unconverted (expected the ${bad} listed)`] : []),
      ...(job?.progress['failed'] !== bad ? [`${job?.progress['failed']} listed, expected ${bad}`] : []),
      ...(total[0]!.n !== RECORDS + createdCount ? [`${total[0]!.n} records, expected ${RECORDS + createdCount}`] : []),
    ];
    process.stdout.write(
      [
        `migrations  ${RECORDS} records, amount string → number (1 in ${BAD_EVERY} listed), batches of ${BATCH}, ${CONCURRENCY} writers (PATCH and create in turn)`,
        `  migration      ${migrationSeconds.toFixed(1)} s (${(RECORDS / migrationSeconds).toFixed(0)} records/s; the PUT's switch-over ${switchMs.toFixed(0)} ms)`,
        `  writers during ${describe(during.m)}`,
        `  writers alone  ${describe(baseline)}`,
        `  ratio (during / alone): throughput ${(during.m.perSecond / baseline.perSecond).toFixed(2)}, p50 ${(during.m.p50Ms / baseline.p50Ms).toFixed(2)}, p99 ${(during.m.p99Ms / baseline.p99Ms).toFixed(2)}`,
        `  refused writes ${during.refused + baselineRefused.n}; records ${total[0]!.n} (${RECORDS} + ${createdCount} created); ${problems.length ? `PROBLEMS: ${problems.join('; ')}` : 'every record converted or listed'}`,
        '',
      ].join('\n'),
    );
    http.close();
    if (problems.length) process.exitCode = 1;
  } finally {
    await db.end();
    await services.stop();
  }
}

await main();
