import type { EntityManager } from 'typeorm';
import { queryPrepared } from '@strata/db';

/** Binds a value as the next parameter and answers its placeholder (`$7`). */
export type Bind = (value: unknown) => string;

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
 * outbox event), sent to PostgreSQL as one statement of data-modifying CTEs
 * instead of one round trip each. With a head (the record's own INSERT or
 * UPDATE as CTE `r`), the change and its side rows are one statement, hence
 * one implicit transaction when no transaction is open: side rows are
 * inserted only if the head produced its row, and may take values from it.
 */
export class SideWrites {
  private readonly inserts: Insert[] = [];

  add(table: string, row: Readonly<Record<string, unknown>>): this {
    this.inserts.push({ table, columns: Object.keys(row), values: Object.values(row) });
    return this;
  }

  /** Sends the side rows (after the head, when given) and answers the head's rows (none without a head). */
  async flush<Row>(tx: EntityManager, head?: Head): Promise<Row[]> {
    if (this.inserts.length === 0 && !head) return [];
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
    const ctes = head ? [`r AS (${head.render(bind)})`] : [];
    const statements = this.inserts.map((insert) => {
      const values = insert.values.map(render).join(', ');
      const into = `INSERT INTO ${insert.table} (${insert.columns.join(', ')})`;
      return head ? `${into} SELECT ${values} FROM r` : `${into} VALUES (${values})`;
    });
    this.inserts.length = 0;
    let sql: string;
    if (head) {
      ctes.push(...statements.map((s, i) => `w${i} AS (${s})`));
      sql = `WITH ${ctes.join(', ')} SELECT * FROM r`; // r's own RETURNING lists its columns
    } else {
      const last = statements.pop()!;
      sql = statements.length ? `WITH ${statements.map((s, i) => `w${i} AS (${s})`).join(', ')} ${last}` : last;
    }
    return queryPrepared<Row>(tx, sql, params);
  }
}

/** Objects and arrays bound as JSON (dates and buffers have their own parameter types). */
function isJsonObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !(value instanceof Date) && !Buffer.isBuffer(value);
}
