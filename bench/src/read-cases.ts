/**
 * The read cases of the data service against a column-per-property yardstick,
 * measured in the same run (issue 37, point 4), as a module: bench/src/queries.ts
 * runs it on its own services, and a platform-wide benchmark can call
 * {@link runReadCases} with the data API base, a token and a `pg` pool of the
 * same database.
 *
 * What it does:
 * 1. creates a 10-property collection `orders` through the API (`sku` unique,
 *    `customer` and `amount` indexed, `title` the default search field) and
 *    inserts `records` rows with SQL, then waits for the service's
 *    per-collection indexes and statistics and runs VACUUM ANALYZE;
 * 2. copies the same rows into a plain typed table `yardstick.orders` (one
 *    column per property with its SQL type; unique on sku, btree on customer,
 *    amount and (created_at, id), a GIN full-text index on title: what an
 *    ordinary column-per-property backend has for the same definition);
 * 3. starts the yardstick HTTP server (bench/src/yardstick.ts) in a process of
 *    its own: node:http and a pg pool, JSON rows out, no auth;
 * 4. per case, measures with the same client at the same concurrency: ours
 *    over HTTP, the yardstick over HTTP, then our compiled SQL and the typed
 *    SQL straight through `pg` (the storage gap without the request overhead).
 *
 * "Our SQL" is the statement the query compiler emits for the case, written
 * out here (the compiler needs a workspace scope, which only trusted code may
 * issue); before measuring, each is run once and must return the same record
 * ids as the API, so a compiler change that is not mirrored here fails the run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { eventually } from '@strata/testing';
import { call } from '@strata/testkit';
import { measure, type Measurement } from './measure.js';

export interface ReadCasesOptions {
  /** The data API of the workspace, `{dataUrl}/data/workspace/{ws}/api/v1`. */
  readonly base: string;
  readonly token: string;
  /** A pool of the database the data service uses (its `max` need not exceed the concurrency). */
  readonly db: pg.Pool;
  /** The workspace slug of `base`. */
  readonly workspace: string;
  readonly databaseUrl: string;
  readonly records?: number;
  readonly runs?: number;
  readonly concurrency?: number;
  /** Pages of the cursor walk (each side). */
  readonly walkPages?: number;
  /** Print EXPLAIN (ANALYZE, BUFFERS) of our SQL and the typed SQL for every case. */
  readonly explain?: boolean;
  /** The collection slug (a platform bench may already have an `orders`). */
  readonly slug?: string;
  readonly log?: (line: string) => void;
}

export interface ReadCaseResult {
  readonly name: string;
  readonly ours: Measurement;
  readonly yardstick: Measurement;
  readonly oursSql: Measurement;
  readonly typedSql: Measurement;
}

export const READ_PROPERTIES = [
  { name: 'sku', type: 'string', isUnique: true },
  { name: 'customer', type: 'string', indexed: true },
  { name: 'amount', type: 'number', indexed: true },
  { name: 'region', type: 'string' },
  { name: 'title', type: 'string' },
  { name: 'placedAt', type: 'datetime' },
  { name: 'quantity', type: 'number' },
  { name: 'channel', type: 'string' },
  { name: 'express', type: 'boolean' },
  { name: 'note', type: 'string' },
];

const COLORS = ['red', 'green', 'blue', 'amber', 'violet'];

interface Case {
  readonly name: string;
  readonly ours: (i: number) => Promise<unknown[]>;
  readonly yardstick: (i: number) => Promise<unknown>;
  /** Our compiled statement and its parameters for run i. */
  readonly oursSql: (i: number) => [string, unknown[]];
  readonly typedSql: (i: number) => [string, unknown[]];
  /** The ids (or group keys) of an API answer and of a row set of our SQL, to check that they agree. */
  readonly key: (row: Record<string, unknown>) => unknown;
  readonly runs?: number;
}

export function formatReadCase(r: ReadCaseResult): string {
  const f = (n: number) => n.toFixed(2).padStart(7);
  return (
    `  ${r.name.padEnd(24)} ours ${f(r.ours.p50Ms)} / ${f(r.ours.p99Ms)} ms | yardstick ${f(r.yardstick.p50Ms)} / ${f(r.yardstick.p99Ms)} ms` +
    ` | ratio p50 ${(r.ours.p50Ms / r.yardstick.p50Ms).toFixed(2)}x p99 ${(r.ours.p99Ms / r.yardstick.p99Ms).toFixed(2)}x` +
    ` | sql p50 ours ${f(r.oursSql.p50Ms)} typed ${f(r.typedSql.p50Ms)} ms (${(r.oursSql.p50Ms / r.typedSql.p50Ms).toFixed(2)}x)`
  );
}

/** Starts the yardstick server; answers its URL and a stop function. */
async function startYardstick(databaseUrl: string, table: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const entry = fileURLToPath(new URL('./yardstick.js', import.meta.url));
  const child: ChildProcess = spawn(process.execPath, [entry], {
    env: { ...process.env, DATABASE_URL: databaseUrl, YARDSTICK_TABLE: table, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (l) => {
      const m = /^ready (\d+)$/.exec(l);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`yardstick exited (${code})`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export async function runReadCases(o: ReadCasesOptions): Promise<ReadCaseResult[]> {
  const RECORDS = o.records ?? 100_000;
  const RUNS = o.runs ?? 200;
  const CONCURRENCY = o.concurrency ?? 4;
  const WALK = o.walkPages ?? 200;
  const slug = o.slug ?? 'orders';
  const log = o.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  const { db, base, token } = o;

  const created = await call('POST', `${base}/structures`, {
    token,
    body: { name: slug, recordSlug: slug, defaultSearchField: 'title', properties: READ_PROPERTIES },
  });
  if (created.status !== 200) throw new Error(`collection: ${JSON.stringify(created.body)}`);
  const collectionId = created.body.id as string;

  const t0 = performance.now();
  await db.query(
    `INSERT INTO data.records (id, workspace_slug, collection_id, data, created_by, updated_by, created_at)
     SELECT gen_random_uuid(), $1, $2::uuid, jsonb_build_object(
       'sku', 'SKU-' || i, 'customer', 'customer-' || (i % 1000), 'amount', (i::bigint * 7919) % 10000,
       'region', (ARRAY['north','south','east','west','central'])[1 + i % 5],
       'title', 'order ' || i || ' of ' || (ARRAY['red','green','blue','amber','violet'])[1 + i % 5] || ' widgets'
                || CASE WHEN i % 997 = 0 THEN ' priority' ELSE '' END,
       'placedAt', to_char(timestamptz '2026-01-01' + i * interval '1 minute', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
       'quantity', 1 + i % 20, 'channel', (ARRAY['web','store','phone'])[1 + i % 3], 'express', i % 7 = 0,
       'note', 'note for order ' || i),
       'bench', 'bench', timestamptz '2026-01-01' + i * interval '1 second'
     FROM generate_series(1, $3::int) i`,
    [o.workspace, collectionId, RECORDS],
  );
  // The service builds the collection's indexes after the collection is created; wait for them.
  const prefix = `rx_${collectionId.replace(/-/g, '')}_`;
  await eventually(async () => {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
       WHERE i.indisvalid AND left(c.relname, length($1)) = $1`,
      [prefix],
    );
    return rows[0]!.n >= 5 ? true : undefined;
  }, 600_000);
  // And for its planner statistics (one per scalar property, where the service makes them).
  await eventually(async () => {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_statistic_ext WHERE left(stxname, length($1)) = $1`,
      [prefix],
    );
    return rows[0]!.n >= READ_PROPERTIES.length ? true : undefined;
  }, 30_000).catch(() => log('  (no planner statistics objects for the collection)'));
  // What autovacuum does after a bulk load: statistics, the visibility map, and the GIN indexes'
  // pending lists merged (the indexes exist before the rows, so every row went to a pending list
  // that each search would read through).
  await db.query('VACUUM ANALYZE data.records');
  const loadSeconds = (performance.now() - t0) / 1000;

  const table = `yardstick.${slug.replace(/[^a-z0-9_]/g, '_')}`;
  const t1 = performance.now();
  await db.query('CREATE SCHEMA IF NOT EXISTS yardstick');
  await db.query(`DROP TABLE IF EXISTS ${table}`);
  await db.query(
    `CREATE TABLE ${table} (id uuid PRIMARY KEY, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL,
       sku text, customer text, amount numeric, region text, title text, placed_at timestamptz,
       quantity numeric, channel text, express boolean, note text)`,
  );
  await db.query(
    `INSERT INTO ${table}
     SELECT id, created_at, updated_at, data->>'sku', data->>'customer', (data->>'amount')::numeric, data->>'region',
       data->>'title', (data->>'placedAt')::timestamptz, (data->>'quantity')::numeric, data->>'channel',
       (data->>'express')::boolean, data->>'note'
     FROM data.records WHERE collection_id = $1::uuid AND deleted_at IS NULL`,
    [collectionId],
  );
  for (const ddl of [
    `CREATE UNIQUE INDEX ON ${table} (sku)`,
    `CREATE INDEX ON ${table} (customer)`,
    `CREATE INDEX ON ${table} (amount)`,
    `CREATE INDEX ON ${table} (created_at, id)`,
    `CREATE INDEX ON ${table} USING gin (to_tsvector('simple', title))`,
  ])
    await db.query(ddl);
  await db.query(`VACUUM ANALYZE ${table}`);
  const copySeconds = (performance.now() - t1) / 1000;

  const yard = await startYardstick(o.databaseUrl, table);
  try {
    const get = async (path: string) => {
      const res = await call('GET', `${base}${path}`, { token });
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body as { results: Record<string, unknown>[]; pagination: { nextCursor: string | null } };
    };
    const post = async (path: string, body: unknown) => {
      const res = await call('POST', `${base}${path}`, { token, body });
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body as Record<string, unknown>;
    };
    const yardGet = async (path: string) => {
      const res = await call('GET', `${yard.url}${path}`);
      if (res.status !== 200) throw new Error(`yardstick ${path}: ${res.status} ${String(res.body)}`);
      return res.body as unknown;
    };
    const scope = (ws: number, col: number) =>
      `r.workspace_slug = $${ws} AND r.collection_id = $${col}::uuid AND r.deleted_at IS NULL`;
    const from = 'FROM data.records r JOIN data.collections c ON c.id = r.collection_id';
    const key = (p: number) => `COALESCE(r.data #> $${p}::text[], 'null'::jsonb)`;
    const ws = o.workspace;
    const byId = (row: Record<string, unknown>) => row['id'];

    const cases: Case[] = [
      {
        name: 'equality filter',
        ours: async (i) => (await get(`/records/slug/${slug}?filter=customer:customer-${i % 1000}&limit=20`)).results,
        yardstick: (i) => yardGet(`/eq?customer=customer-${i % 1000}&limit=20`),
        oursSql: (i) => [
          `SELECT r.*, c.record_slug, (r.created_at)::text AS sort_key_0 ${from}
           WHERE ${scope(1, 2)} AND (${key(3)} = $4::jsonb) ORDER BY r.created_at ASC, r.id ASC LIMIT $5::integer`,
          [ws, collectionId, ['customer'], JSON.stringify(`customer-${i % 1000}`), 21],
        ],
        typedSql: (i) => [
          `SELECT * FROM ${table} WHERE customer = $1 ORDER BY created_at, id LIMIT 20`,
          [`customer-${i % 1000}`],
        ],
        key: byId,
      },
      {
        name: 'range + sort + limit',
        ours: async (i) =>
          (
            await post('/records/query', {
              resource: slug,
              where: { 'data.amount': { gte: 9000 + (i % 500) } },
              sort: [{ field: 'data.amount', direction: 'desc' }],
              page: { limit: 20 },
            })
          )['data'] as unknown[],
        yardstick: (i) => yardGet(`/range?min=${9000 + (i % 500)}&limit=20`),
        oursSql: (i) => [
          `SELECT r.*, c.record_slug, (${key(3)})::text AS sort_key_0 ${from}
           WHERE ${scope(1, 2)} AND ((${key(4)} >= $5::jsonb AND jsonb_typeof(${key(4)}) = 'number'))
           ORDER BY ${key(3)} DESC, r.id ASC LIMIT $6::integer`,
          [ws, collectionId, ['amount'], ['amount'], String(9000 + (i % 500)), 21],
        ],
        typedSql: (i) => [
          `SELECT * FROM ${table} WHERE amount >= $1 ORDER BY amount DESC, id LIMIT 20`,
          [9000 + (i % 500)],
        ],
        key: byId,
      },
      {
        name: 'GROUP BY count',
        ours: async () =>
          (await post('/query', { query: `SELECT region, COUNT(*) AS n FROM ${slug} GROUP BY region` }))[
            'data'
          ] as unknown[],
        yardstick: () => yardGet('/group-count'),
        oursSql: () => [
          `SELECT (r.data #> $3::text[]) AS c0, count(*)::int AS c1 FROM data.records r
           WHERE ${scope(1, 2)} GROUP BY 1 ORDER BY 1 ASC LIMIT $4::integer`,
          [ws, collectionId, ['region'], 1001],
        ],
        typedSql: () => [`SELECT region, count(*)::int AS n FROM ${table} GROUP BY region ORDER BY region`, []],
        key: (row) => row['region'] ?? row['c0'],
        runs: Math.max(20, RUNS / 4),
      },
      {
        name: 'GROUP BY count, sum',
        ours: async () =>
          (
            await post('/query', {
              query: `SELECT region, COUNT(*) AS n, SUM(amount) AS total FROM ${slug} GROUP BY region`,
            })
          )['data'] as unknown[],
        yardstick: () => yardGet('/group-sum'),
        oursSql: () => [
          `SELECT (r.data #> $3::text[]) AS c0, count(*)::int AS c1,
             sum(CASE WHEN jsonb_typeof((r.data #> $4::text[])) = 'number' THEN ((r.data #> $4::text[]))::numeric END) AS c2
           FROM data.records r WHERE ${scope(1, 2)} GROUP BY 1 ORDER BY 1 ASC LIMIT $5::integer`,
          [ws, collectionId, ['region'], ['amount'], 1001],
        ],
        typedSql: () => [
          `SELECT region, count(*)::int AS n, sum(amount) AS total FROM ${table} GROUP BY region ORDER BY region`,
          [],
        ],
        key: (row) => row['region'] ?? row['c0'],
        runs: Math.max(20, RUNS / 4),
      },
      {
        name: 'text search',
        ours: async (i) =>
          (
            await post('/records/query', {
              resource: slug,
              text: { query: `priority ${COLORS[i % 5]}` },
              page: { limit: 20 },
            })
          )['data'] as unknown[],
        yardstick: (i) => yardGet(`/search?q=${encodeURIComponent(`priority ${COLORS[i % 5]}`)}&limit=20`),
        oursSql: (i) => [
          `SELECT r.*, c.record_slug, (r.created_at)::text AS sort_key_0 ${from}
           WHERE ${scope(1, 2)} AND (to_tsvector('simple', COALESCE(r.data #>> $3::text[], '')) @@ websearch_to_tsquery('simple', $4::text))
           ORDER BY r.created_at ASC, r.id ASC LIMIT $5::integer`,
          [ws, collectionId, ['title'], `priority ${COLORS[i % 5]}`, 21],
        ],
        typedSql: (i) => [
          `SELECT * FROM ${table} WHERE to_tsvector('simple', title) @@ websearch_to_tsquery('simple', $1)
           ORDER BY created_at, id LIMIT 20`,
          [`priority ${COLORS[i % 5]}`],
        ],
        key: byId,
      },
    ];

    // The cursor pages: the cursors of the first `walkPages` pages, taken from a walk of each side
    // first (a keyset page costs the same wherever it starts; a walk of 1M records would not).
    const oursCursors: (string | undefined)[] = [undefined];
    const yardCursors: ({ at: string; id: string } | undefined)[] = [undefined];
    const step = 1;
    {
      let cursor: string | undefined;
      for (let p = 0; p < WALK * step && (p === 0 || cursor); p++) {
        const body = await get(
          `/records/slug/${slug}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        cursor = body.pagination.nextCursor ?? undefined;
        if (cursor && (p + 1) % step === 0) oursCursors.push(cursor);
      }
      const { rows } = await db.query<{ at: string; id: string }>(
        `SELECT created_at::text AS at, id FROM ${table} ORDER BY created_at, id LIMIT $1`,
        [WALK * step * 100],
      );
      for (let p = 100 * step - 1; p < rows.length; p += 100 * step) yardCursors.push(rows[p]);
    }
    const decode = (c: string | undefined) =>
      c ? (JSON.parse(Buffer.from(c, 'base64url').toString()) as { k: string[]; id: string }) : undefined;
    cases.push({
      name: 'cursor page (100)',
      ours: async (i) => {
        const c = oursCursors[i % oursCursors.length];
        return (await get(`/records/slug/${slug}?limit=100${c ? `&cursor=${encodeURIComponent(c)}` : ''}`)).results;
      },
      yardstick: (i) => {
        const c = yardCursors[i % yardCursors.length];
        return yardGet(`/page?limit=100${c ? `&at=${encodeURIComponent(c.at)}&id=${c.id}` : ''}`);
      },
      oursSql: (i) => {
        const c = decode(oursCursors[i % oursCursors.length]);
        return c
          ? [
              `SELECT r.*, c.record_slug, (r.created_at)::text AS sort_key_0 ${from}
               WHERE ${scope(1, 2)} AND ((r.created_at, r.id) > ($3::timestamptz, $4::uuid))
               ORDER BY r.created_at ASC, r.id ASC LIMIT $5::integer`,
              [ws, collectionId, c.k[0], c.id, 101],
            ]
          : [
              `SELECT r.*, c.record_slug, (r.created_at)::text AS sort_key_0 ${from}
               WHERE ${scope(1, 2)} ORDER BY r.created_at ASC, r.id ASC LIMIT $3::integer`,
              [ws, collectionId, 101],
            ];
      },
      typedSql: (i) => {
        const c = yardCursors[i % yardCursors.length];
        return c
          ? [
              `SELECT * FROM ${table} WHERE (created_at, id) > ($1::timestamptz, $2::uuid) ORDER BY created_at, id LIMIT 100`,
              [c.at, c.id],
            ]
          : [`SELECT * FROM ${table} ORDER BY created_at, id LIMIT 100`, []];
      },
      key: byId,
    });

    log(
      `records/read  ${RECORDS} records in a ${READ_PROPERTIES.length}-property collection (loaded and indexed in ${loadSeconds.toFixed(1)} s, typed copy in ${copySeconds.toFixed(1)} s), ${RUNS} runs per case, concurrency ${CONCURRENCY}\n` +
        `  ours = HTTP through the data service; yardstick = node:http + pg on the typed table (own process); sql = the statements through pg from here. ours / yardstick p50 / p99`,
    );
    const results: ReadCaseResult[] = [];
    for (const c of cases) {
      // Our SQL must return what the API returns (the compiler and this mirror agree).
      const api = (await c.ours(1)).map((r) => c.key(r as Record<string, unknown>));
      const [text, params] = c.oursSql(1);
      const mine = (await db.query<Record<string, unknown>>(text, params)).rows.map(c.key);
      const shown = mine.slice(0, api.length);
      if (JSON.stringify(shown) !== JSON.stringify(api))
        throw new Error(
          `${c.name}: the mirrored SQL answers ${JSON.stringify(shown).slice(0, 200)}, the API ${JSON.stringify(api).slice(0, 200)}`,
        );
      if (o.explain) {
        for (const [label, [sql, ps]] of [
          ['ours', c.oursSql(1)],
          ['typed', c.typedSql(1)],
        ] as const) {
          const { rows } = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, ps);
          log(`  -- ${c.name}, ${label} SQL:\n${rows.map((r) => `     ${r['QUERY PLAN']}`).join('\n')}`);
        }
      }
      const runs = c.runs ?? RUNS;
      const sqlOp = (pick: (i: number) => [string, unknown[]]) => async (i: number) => {
        const [s, p] = pick(i);
        await db.query(s, p);
      };
      await measure(20, CONCURRENCY, async (i) => void (await c.ours(i)));
      await measure(20, CONCURRENCY, async (i) => void (await c.yardstick(i)));
      const ours = await measure(runs, CONCURRENCY, async (i) => void (await c.ours(i)));
      const yardstick = await measure(runs, CONCURRENCY, async (i) => void (await c.yardstick(i)));
      await measure(10, CONCURRENCY, sqlOp(c.oursSql));
      await measure(10, CONCURRENCY, sqlOp(c.typedSql));
      const oursSql = await measure(runs, CONCURRENCY, sqlOp(c.oursSql));
      const typedSql = await measure(runs, CONCURRENCY, sqlOp(c.typedSql));
      const result = { name: c.name, ours, yardstick, oursSql, typedSql };
      results.push(result);
      log(formatReadCase(result));
    }
    const worst = Math.max(...results.map((r) => r.ours.p50Ms / r.yardstick.p50Ms));
    log(`  worst p50 ratio ${worst.toFixed(2)}x (target: at most 1.5x)`);
    return results;
  } finally {
    await yard.stop();
  }
}
