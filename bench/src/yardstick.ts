/**
 * The read yardstick (bench/src/read-cases.ts): the least a column-per-property
 * backend costs per request, in a process of its own. `node:http` and a `pg`
 * pool, no framework, no auth, no validation beyond parsing numbers; each
 * route runs one fixed statement on the plain typed table `YARDSTICK_TABLE`
 * and answers its rows as JSON, the way a PostgREST-like backend answers a
 * table read. Prints `ready <port>` once listening.
 *
 * Environment: `DATABASE_URL`, `YARDSTICK_TABLE` (schema-qualified, checked),
 * `YARDSTICK_POOL` (connections, default 10, PostgREST's default pool size).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import pg from 'pg';

const table = process.env['YARDSTICK_TABLE'] ?? '';
if (!/^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$/.test(table)) throw new Error('YARDSTICK_TABLE: schema.table');
const pool = new pg.Pool({
  connectionString: process.env['DATABASE_URL'],
  max: Number(process.env['YARDSTICK_POOL'] ?? 10),
});

/** The statements, one per route, and how each reads its parameters from the query string. */
const ROUTES: Record<string, { sql: string; params: (q: URLSearchParams) => unknown[] }> = {
  '/eq': {
    sql: `SELECT * FROM ${table} WHERE customer = $1 ORDER BY created_at, id LIMIT $2`,
    params: (q) => [q.get('customer'), Number(q.get('limit') ?? 20)],
  },
  '/range': {
    sql: `SELECT * FROM ${table} WHERE amount >= $1 ORDER BY amount DESC, id LIMIT $2`,
    params: (q) => [Number(q.get('min')), Number(q.get('limit') ?? 20)],
  },
  '/group-count': {
    sql: `SELECT region, count(*)::int AS n FROM ${table} GROUP BY region ORDER BY region`,
    params: () => [],
  },
  '/group-sum': {
    sql: `SELECT region, count(*)::int AS n, sum(amount) AS total FROM ${table} GROUP BY region ORDER BY region`,
    params: () => [],
  },
  '/search': {
    sql: `SELECT * FROM ${table} WHERE to_tsvector('simple', title) @@ websearch_to_tsquery('simple', $1)
          ORDER BY created_at, id LIMIT $2`,
    params: (q) => [q.get('q'), Number(q.get('limit') ?? 20)],
  },
  '/page': {
    sql: `SELECT * FROM ${table} WHERE ($1::timestamptz IS NULL OR (created_at, id) > ($1::timestamptz, $2::uuid))
          ORDER BY created_at, id LIMIT $3`,
    params: (q) => [q.get('at'), q.get('id'), Number(q.get('limit') ?? 100)],
  },
};

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://yardstick');
  const route = ROUTES[url.pathname];
  if (!route) {
    res.writeHead(404).end();
    return;
  }
  const { rows } = await pool.query(route.sql, route.params(url.searchParams));
  const body = JSON.stringify(rows);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

const server = createServer((req, res) => {
  handle(req, res).catch((err: unknown) => {
    res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env['PORT'] ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`ready ${typeof address === 'object' && address ? address.port : 0}\n`);
});
const stop = () => {
  server.close();
  void pool.end().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
