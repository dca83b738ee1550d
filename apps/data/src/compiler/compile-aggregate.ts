import { compileWhere, systemColumn, type TypedWhere } from './compile-where.js';
import { textCondition } from './compile-text.js';
import { Params } from './params.js';
import type { FieldRef, FieldType, TextSearch } from './query.types.js';
import type { WorkspaceScope } from '@strata/db';
import type { ScopedStatement } from './scoped-statement.js';

export type AggregateFn = 'count' | 'sum' | 'avg' | 'min' | 'max';

export interface GroupKey {
  readonly name: string;
  readonly field: FieldRef;
}

export interface AggregateItem {
  readonly alias: string;
  readonly fn: AggregateFn;
  /** null for COUNT(*). */
  readonly field: FieldRef | null;
  readonly type: FieldType | 'text' | null;
}

export interface AggregateQuery {
  /** The caller's workspace: the first condition of every statement compiled from this query. */
  readonly scope: WorkspaceScope;
  readonly collectionId: string;
  readonly where?: TypedWhere;
  readonly text?: TextSearch;
  readonly groups: readonly GroupKey[];
  readonly aggregates: readonly AggregateItem[];
  /** Ordinal positions in the output (groups first, then aggregates), 1-based. */
  readonly order: readonly { readonly position: number; readonly direction: 'asc' | 'desc' }[];
  readonly limit: number;
  readonly offset?: number;
}

function groupExpression(field: FieldRef, params: Params): string {
  return field.kind === 'system'
    ? systemColumn(field.column).column
    : `(r.data #> ${params.add(field.path, 'text[]')})`;
}

function aggregateExpression(item: AggregateItem, params: Params): string {
  if (item.field === null) return 'count(*)::int';
  if (item.field.kind === 'system') {
    const { column } = systemColumn(item.field.column);
    return item.fn === 'count' ? `count(${column})::int` : `${item.fn}(${column})`;
  }
  const json = `(r.data #> ${params.add(item.field.path, 'text[]')})`;
  if (item.fn === 'count') return `count(${json})::int`;
  if (item.fn === 'sum' || item.fn === 'avg' || item.type === 'number') {
    return `${item.fn}(CASE WHEN jsonb_typeof(${json}) = 'number' THEN (${json})::numeric END)`;
  }
  return `${item.fn}(CASE WHEN jsonb_typeof(${json}) = 'string' THEN ${json} #>> '{}' END)`;
}

/**
 * GROUP BY with COUNT, SUM, AVG, MIN and MAX over the same scope as every
 * records query. Groups and ordering refer to output positions, so no field
 * expression is repeated in the SQL; every path is a bind parameter.
 */
export function compileAggregate(q: AggregateQuery): ScopedStatement & { columns: string[] } {
  const params = new Params();
  const conditions = [
    `r.workspace_slug = ${params.add(q.scope.workspace)} AND r.collection_id = ${params.add(q.collectionId, 'uuid')} AND r.deleted_at IS NULL`,
  ];
  const outputs = [
    ...q.groups.map((g) => groupExpression(g.field, params)),
    ...q.aggregates.map((a) => aggregateExpression(a, params)),
  ];
  if (q.where) conditions.push(compileWhere(q.where, params));
  if (q.text) conditions.push(textCondition(q.text, params));
  const columns = outputs.map((_, i) => `c${i}`);
  const select = outputs.map((o, i) => `${o} AS ${columns[i]}`).join(', ');
  const where = conditions.join(' AND ');
  // The collection row is joined only when the query names `recordSlug` (c.record_slug): joined
  // below the aggregate, its columns widen every row that is hashed or sorted for nothing.
  const from = /\bc\.record_slug\b/.test(`${select} ${where}`)
    ? 'data.records r JOIN data.collections c ON c.id = r.collection_id'
    : 'data.records r';
  let sql = `SELECT ${select}
    FROM ${from} WHERE ${where}`;
  if (q.groups.length) sql += ` GROUP BY ${q.groups.map((_, i) => i + 1).join(', ')}`;
  const order = q.order.length ? q.order : q.groups.map((_, i) => ({ position: i + 1, direction: 'asc' as const }));
  if (order.length) sql += ` ORDER BY ${order.map((o) => `${o.position} ${o.direction.toUpperCase()}`).join(', ')}`;
  sql += ` LIMIT ${params.add(q.limit, 'integer')}`;
  if (q.offset) sql += ` OFFSET ${params.add(q.offset, 'integer')}`;
  return { scope: q.scope, sql, params: params.values, columns };
}
