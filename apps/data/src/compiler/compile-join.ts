import { compileWhere, systemColumn } from './compile-where.js';
import { sortExpression, type CompilableQuery } from './compile-select.js';
import { textCondition } from './compile-text.js';
import { Params } from './params.js';
import type { FieldRef } from './query.types.js';
import type { ScopedStatement } from './scoped-statement.js';

export const JOIN_TYPES = ['inner', 'left', 'right', 'full'] as const;
export type JoinType = (typeof JOIN_TYPES)[number];

/** A join checked against both collections. */
export interface CompiledJoinSpec {
  readonly alias: string;
  readonly type: JoinType;
  readonly foreignCollectionId: string;
  readonly local: FieldRef;
  readonly foreign: FieldRef;
}

/** A field of `table` as jsonb, so an id column and a reference value stored in data compare alike. */
function joinKey(table: string, field: FieldRef, params: Params): string {
  if (field.kind === 'system') return `to_jsonb(${systemColumn(field.column).column.replace(/^r\./, `${table}.`)})`;
  return `(${table}.data #> ${params.add(field.path, 'text[]')})`;
}

/**
 * A records query with joins. Each side is first cut to its own scope (the
 * workspace, its collection, live records) in a subquery, and only then joined,
 * so that no join type (right and full included) can bring in a record of
 * another collection or workspace. Conditions, text search and sorting apply to
 * the primary records; keyset cursors are not available (rows may repeat).
 */
export function compileJoinSelect(
  q: Omit<CompilableQuery, 'after'>,
  joins: readonly CompiledJoinSpec[],
): ScopedStatement {
  const params = new Params();
  const ws = params.add(q.scope.workspace);
  const scoped = (collection: string) =>
    `(SELECT * FROM data.records WHERE workspace_slug = ${ws} AND collection_id = ${collection} AND deleted_at IS NULL)`;
  let from = `${scoped(params.add(q.collectionId, 'uuid'))} r LEFT JOIN data.collections c ON c.id = r.collection_id`;
  const joined: string[] = [];
  joins.forEach((j, i) => {
    const t = `j${i}`;
    const type = j.type === 'inner' ? 'INNER' : j.type.toUpperCase();
    from += ` ${type} JOIN ${scoped(params.add(j.foreignCollectionId, 'uuid'))} ${t} ON ${joinKey('r', j.local, params)} = ${joinKey(t, j.foreign, params)}`;
    joined.push(`, ${t}.id AS j${i}_id, ${t}.data AS j${i}_data`);
  });
  const conditions: string[] = [];
  if (q.where) conditions.push(compileWhere(q.where, params));
  if (q.text) conditions.push(textCondition(q.text, params));
  const keys = q.sort.map((k) => ({ ...sortExpression(k, params), direction: k.direction }));
  const order = [
    ...keys.map((k) => `${k.expr} ${k.direction.toUpperCase()}`),
    'r.id ASC NULLS LAST',
    ...joins.map((_, i) => `j${i}.id ASC NULLS LAST`),
  ].join(', ');
  let sql = `SELECT r.*, c.record_slug${joined.join('')} FROM ${from}${conditions.length ? ` WHERE ${conditions.join(' AND ')}` : ''}
    ORDER BY ${order} LIMIT ${params.add(q.limit, 'integer')}`;
  if (q.offset) sql += ` OFFSET ${params.add(q.offset, 'integer')}`;
  return { scope: q.scope, sql, params: params.values };
}
