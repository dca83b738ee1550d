import type { EntityManager } from 'typeorm';
import { queryPrepared } from '@strata/db';

import type { Bind } from '../compiler/params.js';

/**
 * A column value computed by PostgreSQL from the head row `r` (its timestamps,
 * say), rendered with bound parameters only: no value is ever spliced into SQL.
 */
export class FromHead {
  constructor(readonly render: (bind: Bind) => string) {}
}

/** The statement whose single returned row the side writes depend on: it is the CTE `r`. */
export interface Head {
  readonly render: (bind: Bind) => string;
}

interface Insert {
  readonly table: string;
  readonly columns: readonly string[];
  readonly values: readonly unknown[];
}

/** `to_jsonb` of a timestamp column as JavaScript's `toISOString()` writes it (milliseconds, truncated). */
export function isoJson(column: string): string {
  return `to_jsonb(to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;
}

/**
 * Rows that accompany a change (unique values, version, changelog entry,
 * outbox event), sent to PostgreSQL in one statement with the change's head:
 * the record's own INSERT, UPDATE or DELETE, or a scoped read of its row, as
 * the CTE `r`. Every side row is written `FROM r`, so it exists only if the
 * head produced the record's row in the caller's workspace, and it may take
 * values from it. One statement is one implicit transaction when no
 * transaction is open.
 */
export class SideWrites {
  private readonly inserts: Insert[] = [];

  isEmpty(): boolean {
    return this.inserts.length === 0;
  }

  add(table: string, row: Readonly<Record<string, unknown>>): this {
    this.inserts.push({ table, columns: Object.keys(row), values: Object.values(row) });
    return this;
  }

  /** Sends the head and the side rows as one statement and answers the head's rows. */
  async flush<Row>(tx: EntityManager, head: Head): Promise<Row[]> {
    const params: unknown[] = [];
    // One parameter per object: a record's data is also its version's data, its changes
    // are also its changelog entry's, and each is serialized and sent once.
    const bound = new Map<object, string>();
    const bind: Bind = (value) => {
      const known = isJsonObject(value) ? bound.get(value) : undefined;
      if (known) return known;
      params.push(value);
      const placeholder = `$${params.length}`;
      if (isJsonObject(value)) bound.set(value, placeholder);
      return placeholder;
    };
    const render = (v: unknown) => (v instanceof FromHead ? v.render(bind) : bind(v));
    const ctes = [`r AS (${head.render(bind)})`];
    for (const [i, insert] of this.inserts.entries()) {
      const values = insert.values.map(render).join(', ');
      ctes.push(`w${i} AS (INSERT INTO ${insert.table} (${insert.columns.join(', ')}) SELECT ${values} FROM r)`);
    }
    this.inserts.length = 0;
    // r's own RETURNING (or select list) names its columns.
    return queryPrepared<Row>(tx, `WITH ${ctes.join(', ')} SELECT * FROM r`, params);
  }
}

/** Objects and arrays bound as JSON (dates and buffers have their own parameter types). */
function isJsonObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !(value instanceof Date) && !Buffer.isBuffer(value);
}
