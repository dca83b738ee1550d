/**
 * `pnpm bench` → reads through the data service on a collection of 100 000
 * records (an equality filter, a range filter with sort and limit, a cursor walk
 * through the whole collection, a text search and a GROUP BY), each against the
 * same query written by hand in SQL and run through `pg` from this process, in
 * the same run, on the same table and its indexes. The ratio is what the API
 * costs on top of the SQL (HTTP, token, rate limit, validation, compiling,
 * shaping the response), and whether the compiled SQL reaches the indexes the
 * hand-written SQL uses.
 *
 * The records are inserted with SQL (the write path has its own benchmark):
 * reads see the same rows and indexes as records written through the API.
 */
import pg from 'pg';
import { eventually } from '@strata/testing';
import { call } from '@strata/testkit';
import { measure, type Measurement } from './measure.js';
import { benchWorkspace, startUnlimitedServices } from './services.js';

const RECORDS = Number(process.env['BENCH_QUERY_RECORDS'] ?? 100_000);
const RUNS = Number(process.env['BENCH_QUERY_RUNS'] ?? 200);
const CONCURRENCY = 4;
const PAGE = 100;

const PROPERTIES = [
  { name: 'sku', type: 'string', isUnique: true },
  { name: 'customer', type: 'string', indexed: true },
  { name: 'amount', type: 'number', indexed: true },
  { name: 'region', type: 'string' },
  { name: 'title', type: 'string' },
  { name: 'placedAt', type: 'datetime' },
];

interface Case {
  readonly name: string;
  readonly ours: (i: number) => Promise<void>;
  readonly baseline: (i: number) => Promise<void>;
}

function line(name: string, ours: Measurement, base: Measurement): string {
  const f = (n: number) => n.toFixed(2).padStart(7);
  return `  ${name.padEnd(22)} ours p50 ${f(ours.p50Ms)} ms p99 ${f(ours.p99Ms)} ms | pg p50 ${f(base.p50Ms)} ms p99 ${f(base.p99Ms)} ms | ratio p50 ${(ours.p50Ms / base.p50Ms).toFixed(1)}x p99 ${(ours.p99Ms / base.p99Ms).toFixed(1)}x`;
}

async function main(): Promise<void> {
  const services = await startUnlimitedServices();
  const db = new pg.Pool({ connectionString: services.databaseUrl, max: CONCURRENCY });
  try {
    const ws = 'bench';
    const { token, base } = await benchWorkspace(services);
    const created = await call('POST', `${base}/structures`, {
      token,
      body: { name: 'Orders', defaultSearchField: 'title', properties: PROPERTIES },
    });
    if (created.status !== 200) throw new Error(`collection: ${JSON.stringify(created.body)}`);
    const collectionId = created.body.id as string;

    const t0 = performance.now();
    await db.query(
      `INSERT INTO data.records (id, workspace_slug, collection_id, data, created_by, updated_by, created_at)
       SELECT gen_random_uuid(), $1, $2::uuid, jsonb_build_object(
         'sku', 'SKU-' || i, 'customer', 'customer-' || (i % 1000), 'amount', (i * 7919) % 10000,
         'region', (ARRAY['north','south','east','west','central'])[1 + i % 5],
         'title', 'order ' || i || ' of ' || (ARRAY['red','green','blue','amber','violet'])[1 + i % 5] || ' widgets'
                  || CASE WHEN i % 1000 = 0 THEN ' priority' ELSE '' END,
         'placedAt', to_char(timestamptz '2026-01-01' + i * interval '1 minute', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
         'bench', 'bench', timestamptz '2026-01-01' + i * interval '1 second'
       FROM generate_series(1, $3::int) i`,
      [ws, collectionId, RECORDS],
    );
    // The service builds the collection's indexes after the collection is created; wait for them.
    await eventually(async () => {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
         WHERE i.indisvalid AND left(c.relname, length($1)) = $1`,
        [`rx_${collectionId.replace(/-/g, '')}_`],
      );
      return rows[0]!.n >= 5 ? true : undefined;
    }, 300_000);
    await db.query('ANALYZE data.records');
    const loadSeconds = (performance.now() - t0) / 1000;

    const scope = `workspace_slug = 'bench' AND collection_id = '${collectionId}' AND deleted_at IS NULL`;
    const get = async (path: string) => {
      const res = await call('GET', `${base}${path}`, { token });
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body as { results: unknown[]; pagination: { nextCursor: string | null } };
    };
    const post = async (path: string, body: unknown) => {
      const res = await call('POST', `${base}${path}`, { token, body });
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body as unknown;
    };
    const sql =
      (text: string, params: unknown[] = []) =>
      async () => {
        await db.query(text, params);
      };

    const cases: Case[] = [
      {
        name: 'equality filter',
        ours: async (i) => void (await get(`/records/slug/orders?filter=customer:customer-${i % 1000}&limit=20`)),
        baseline: (i) =>
          sql(
            `SELECT * FROM data.records WHERE ${scope} AND COALESCE(data #> '{customer}', 'null') = $1::jsonb
             ORDER BY created_at, id LIMIT 20`,
            [JSON.stringify(`customer-${i % 1000}`)],
          )(),
      },
      {
        name: 'range + sort + limit',
        ours: async (i) =>
          void (await post('/records/query', {
            resource: 'orders',
            where: { 'data.amount': { gte: 9000 + (i % 500) } },
            sort: [{ field: 'data.amount', direction: 'desc' }],
            page: { limit: 20 },
          })),
        baseline: (i) =>
          sql(
            `SELECT * FROM data.records WHERE ${scope} AND COALESCE(data #> '{amount}', 'null') >= $1::jsonb
             AND jsonb_typeof(COALESCE(data #> '{amount}', 'null')) = 'number'
             ORDER BY COALESCE(data #> '{amount}', 'null') DESC, id LIMIT 20`,
            [String(9000 + (i % 500))],
          )(),
      },
      {
        name: 'text search',
        ours: async (i) =>
          void (await post('/records/query', {
            resource: 'orders',
            text: { query: `priority ${['red', 'green', 'blue', 'amber', 'violet'][i % 5]}` },
            page: { limit: 20 },
          })),
        baseline: (i) =>
          sql(
            `SELECT * FROM data.records WHERE ${scope}
             AND to_tsvector('simple', COALESCE(data #>> '{title}', '')) @@ websearch_to_tsquery('simple', $1)
             ORDER BY created_at, id LIMIT 20`,
            [`priority ${['red', 'green', 'blue', 'amber', 'violet'][i % 5]}`],
          )(),
      },
      {
        name: 'GROUP BY (count, sum)',
        ours: async () =>
          void (await post('/query', {
            query: 'SELECT region, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY region',
          })),
        baseline: sql(
          `SELECT data->'region' AS region, count(*)::int AS n, sum((data->>'amount')::numeric) AS total
           FROM data.records WHERE ${scope} GROUP BY 1`,
        ),
      },
    ];

    const out = [
      `records/query  ${RECORDS} records (loaded and indexed in ${loadSeconds.toFixed(1)} s), ${RUNS} runs per case, concurrency ${CONCURRENCY}; ours = HTTP through the data service, pg = the hand-written SQL`,
    ];
    for (const c of cases) {
      const runs = c.name.startsWith('GROUP') ? Math.max(20, RUNS / 10) : RUNS;
      await measure(20, CONCURRENCY, c.ours);
      await measure(20, CONCURRENCY, c.baseline);
      const ours = await measure(runs, CONCURRENCY, c.ours);
      const baseline = await measure(runs, CONCURRENCY, c.baseline);
      out.push(line(c.name, ours, baseline));
    }

    // A cursor walk through the whole collection, one page at a time, against a keyset walk in SQL.
    const walk = async (page: (cursor: string | undefined) => Promise<string | undefined>) => {
      const latencies: number[] = [];
      let cursor: string | undefined;
      const started = performance.now();
      do {
        const t = performance.now();
        cursor = await page(cursor);
        latencies.push(performance.now() - t);
      } while (cursor);
      latencies.sort((a, b) => a - b);
      const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
      const seconds = (performance.now() - started) / 1000;
      return {
        total: latencies.length,
        seconds,
        perSecond: latencies.length / seconds,
        p50Ms: at(0.5),
        p99Ms: at(0.99),
      };
    };
    const ours = await walk(async (cursor) => {
      const body = await get(
        `/records/slug/orders?limit=${PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      return body.pagination.nextCursor ?? undefined;
    });
    const baseline = await walk(async (cursor) => {
      const [at, id] = cursor ? (JSON.parse(cursor) as [string, string]) : [undefined, undefined];
      const { rows } = await db.query<{ id: string; at: string }>(
        `SELECT *, created_at::text AS at FROM data.records WHERE ${scope}
         ${at ? 'AND (created_at, id) > ($1::timestamptz, $2::uuid)' : ''} ORDER BY created_at, id LIMIT ${PAGE + 1}`,
        at ? [at, id] : [],
      );
      const last = rows[PAGE - 1];
      return rows.length > PAGE && last ? JSON.stringify([last.at, last.id]) : undefined;
    });
    out.push(
      line(`cursor walk (${ours.total} pages)`, ours, baseline) +
        ` | whole walk ${ours.seconds.toFixed(1)} s vs ${baseline.seconds.toFixed(1)} s`,
      '',
    );
    process.stdout.write(out.join('\n'));
  } finally {
    await db.end();
    await services.stop();
  }
}

await main();
