import type { EntityManager } from 'typeorm';
import { rowsOf } from './rows-of.js';

/** What `pg` offers for a query with a statement name: a pool or one of its clients. */
interface PgQueryable {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/**
 * Distinct statements a process prepares at most. Each one costs a little memory in
 * every pooled connection and its PostgreSQL session; past the limit, statements
 * run unnamed (planned each time), which is still correct.
 */
const MAX_PREPARED = 256;
const names = new Map<string, string>();

/** The statement's name in this process, the same for the same text; undefined once the limit is reached. */
function nameOf(sql: string): string | undefined {
  let name = names.get(sql);
  if (name === undefined && names.size < MAX_PREPARED) {
    name = `strata_${names.size + 1}`;
    names.set(sql, name);
  }
  return name;
}

/**
 * Runs one of the service's own fixed statements as a named prepared statement:
 * PostgreSQL parses and plans it once per connection instead of on every call.
 * For a record create (one statement of five inserts) that was most of the
 * database's CPU: 0.60 → 0.35 ms per create (docs/performance.md).
 *
 * Only for SQL built from the code, never from a request's filter, so the set
 * of texts stays small. The statement runs on the manager's transaction when it
 * has one, otherwise on a pooled connection; parameters are converted exactly
 * as `manager.query()` converts them (both are pg's), and the rows come back
 * as pg returns them, for every kind of statement. List the returned columns:
 * a prepared `RETURNING *` fails ("cached plan must not change result type")
 * once a migration adds a column under a running replica.
 */
export async function queryPrepared<Row>(manager: EntityManager, sql: string, params: unknown[]): Promise<Row[]> {
  const name = nameOf(sql);
  if (name === undefined) return rowsOf<Row>(await manager.query(sql, params));
  const target = manager.queryRunner
    ? ((await manager.queryRunner.connect()) as PgQueryable)
    : (manager.connection.driver as unknown as { master: PgQueryable }).master;
  const started = performance.now();
  try {
    return (await target.query({ name, text: sql, values: params })).rows as Row[];
  } finally {
    const ms = performance.now() - started;
    const slow = manager.connection.options.maxQueryExecutionTime;
    if (slow && ms > slow) manager.connection.logger.logQuerySlow(ms, sql, undefined);
  }
}
