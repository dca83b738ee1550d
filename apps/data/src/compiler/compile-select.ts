import { compileWhere, dataExpressions, systemColumn, type TypedWhere } from './compile-where.js';
import { Params } from './params.js';
import type { FieldRef, FieldType } from './query.types.js';
import type { TextSearch } from './query.types.js';
import { textCondition } from './compile-text.js';
import type { WorkspaceScope } from '@strata/db';
import type { ScopedStatement } from './scoped-statement.js';

export interface TypedSortKey {
  readonly field: FieldRef;
  readonly type: FieldType | 'text';
  readonly direction: 'asc' | 'desc';
}

/** The order of records when a query gives none: oldest first (the id breaks ties). */
export const DEFAULT_SORT: readonly TypedSortKey[] = [
  { field: { kind: 'system', column: 'createdAt' }, type: 'datetime', direction: 'asc' },
];

/** A records query checked against its collection, ready to compile. */
export interface CompilableQuery {
  /** The caller's workspace: the first condition of every statement compiled from this query. */
  readonly scope: WorkspaceScope;
  readonly collectionId: string;
  readonly where?: TypedWhere;
  /** Sort keys; the record id is always added last as the tie-breaker. */
  readonly sort: readonly TypedSortKey[];
  readonly limit: number;
  readonly offset?: number;
  /** Keyset position: the sort-key texts and the id of the last row already returned. */
  readonly after?: { readonly keys: readonly string[]; readonly id: string };
  readonly text?: TextSearch;
}

export interface CompiledSelect extends ScopedStatement {
  /** Column aliases holding each sort key's text, for the next cursor. */
  readonly keyColumns: readonly string[];
}

/**
 * A sort key as a SQL expression that is never NULL (so keyset comparisons
 * need no NULL cases), with the cast that turns its text back into a value.
 * Typed data fields sort by their JSON value (numbers by value, strings and
 * UTC datetimes by text, booleans false < true; an absent field sorts as JSON
 * null, first when ascending); schemaless fields sort as text ('' when absent).
 */
export function sortExpression(key: TypedSortKey, params: Params): { expr: string; cast: string } {
  if (key.field.kind === 'system') {
    const { column, cast } = systemColumn(key.field.column);
    return { expr: column, cast };
  }
  const { text, key: json } = dataExpressions(key.field.path, params);
  if (key.type === 'text') return { expr: `COALESCE(${text}, '')`, cast: 'text' };
  return { expr: json, cast: 'jsonb' };
}

/**
 * Compiles a records query. Scope comes first and always: the workspace and the
 * collection (resolved from the caller's workspace) and live records only; the
 * caller's conditions are ANDed inside it and cannot widen it.
 */
export function compileSelect(q: CompilableQuery): CompiledSelect {
  const params = new Params();
  const scope = `r.workspace_slug = ${params.add(q.scope.workspace)} AND r.collection_id = ${params.add(q.collectionId, 'uuid')} AND r.deleted_at IS NULL`;
  const keys = q.sort.map((k) => ({ ...sortExpression(k, params), direction: k.direction }));
  const conditions = [scope];
  if (q.where) conditions.push(compileWhere(q.where, params));
  if (q.text) conditions.push(textCondition(q.text, params));
  if (q.after) conditions.push(keyset(keys, q.after, params));
  const keyColumns = keys.map((_, i) => `sort_key_${i}`);
  const selectKeys = keys.map((k, i) => `, (${k.expr})::text AS ${keyColumns[i]}`).join('');
  const order = [...keys.map((k) => `${k.expr} ${k.direction.toUpperCase()}`), 'r.id ASC'].join(', ');
  let sql = `SELECT r.*, c.record_slug${selectKeys} FROM data.records r JOIN data.collections c ON c.id = r.collection_id
    WHERE ${conditions.join(' AND ')} ORDER BY ${order} LIMIT ${params.add(q.limit, 'integer')}`;
  if (q.offset) sql += ` OFFSET ${params.add(q.offset, 'integer')}`;
  return { scope: q.scope, sql, params: params.values, keyColumns };
}

/** The COUNT of the same scope and conditions (asked for with includeCount only). */
export function compileCount(q: Pick<CompilableQuery, 'scope' | 'collectionId' | 'where' | 'text'>): ScopedStatement {
  const params = new Params();
  const conditions = [
    `r.workspace_slug = ${params.add(q.scope.workspace)} AND r.collection_id = ${params.add(q.collectionId, 'uuid')} AND r.deleted_at IS NULL`,
  ];
  if (q.where) conditions.push(compileWhere(q.where, params));
  if (q.text) conditions.push(textCondition(q.text, params));
  return {
    scope: q.scope,
    sql: `SELECT count(*)::int AS n FROM data.records r JOIN data.collections c ON c.id = r.collection_id WHERE ${conditions.join(' AND ')}`,
    params: params.values,
  };
}

/**
 * Rows strictly after the cursor in the sort order:
 * (k1 ≻ v1) OR (k1 = v1 AND k2 ≻ v2) OR … OR (all equal AND id > last id),
 * where ≻ is > for ascending keys and < for descending ones.
 */
function keyset(
  keys: readonly { expr: string; cast: string; direction: 'asc' | 'desc' }[],
  after: { readonly keys: readonly string[]; readonly id: string },
  params: Params,
): string {
  const values = keys.map((k, i) => params.add(after.keys[i], k.cast));
  const id = params.add(after.id, 'uuid');
  // All ascending (the default order among them): one row comparison, which an index on
  // (keys…, id) answers with a range scan instead of reading the rows before the cursor.
  if (keys.every((k) => k.direction === 'asc'))
    return `((${[...keys.map((k) => k.expr), 'r.id'].join(', ')}) > (${[...values, id].join(', ')}))`;
  const branches: string[] = [];
  for (let i = 0; i <= keys.length; i++) {
    const equal = keys.slice(0, i).map((k, j) => `${k.expr} = ${values[j]}`);
    const next =
      i < keys.length ? `${keys[i]!.expr} ${keys[i]!.direction === 'asc' ? '>' : '<'} ${values[i]}` : `r.id > ${id}`;
    branches.push(`(${[...equal, next].join(' AND ')})`);
  }
  return `(${branches.join(' OR ')})`;
}
