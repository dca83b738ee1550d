import type { Params } from './params.js';
import type { Condition, FieldRef, FieldType, SystemColumn, Where } from './query.types.js';

export interface TypedCondition extends Condition {
  /** How the field compares (resolved against the collection). */
  readonly type: FieldType | 'text';
}

export type TypedWhere =
  | { readonly and: readonly TypedWhere[] }
  | { readonly or: readonly TypedWhere[] }
  | { readonly not: TypedWhere }
  | { readonly condition: TypedCondition };

const SYSTEM_SQL: Record<SystemColumn, { column: string; cast: string }> = {
  id: { column: 'r.id', cast: 'uuid' },
  recordSlug: { column: 'c.record_slug', cast: 'text' },
  status: { column: 'r.status', cast: 'text' },
  workspaceSlug: { column: 'r.workspace_slug', cast: 'text' },
  // numeric, not integer: a filter value beyond the integer range must not fail the cast.
  version: { column: 'r.version', cast: 'numeric' },
  createdAt: { column: 'r.created_at', cast: 'timestamptz' },
  updatedAt: { column: 'r.updated_at', cast: 'timestamptz' },
  createdBy: { column: 'r.created_by', cast: 'text' },
  updatedBy: { column: 'r.updated_by', cast: 'text' },
};

/**
 * `r.data #> $n` (jsonb at the path), `r.data #>> $n` (its text) and the key:
 * the jsonb with an absent field as JSON null. The key is the expression that
 * per-property indexes are built on (collections/property-indexes.ts): typed
 * comparisons and sorts are written against it so that an index serves them.
 * With the path bound as a parameter, PostgreSQL folds it into a constant when
 * planning and matches the index expression.
 */
export function dataExpressions(path: readonly string[], params: Params): { json: string; text: string; key: string } {
  const p = params.add(path, 'text[]');
  return { json: `(r.data #> ${p})`, text: `(r.data #>> ${p})`, key: `COALESCE(r.data #> ${p}, 'null'::jsonb)` };
}

/** The JSON type a field of `type` holds. */
function jsonType(type: FieldType): 'number' | 'boolean' | 'string' {
  return type === 'number' ? 'number' : type === 'boolean' ? 'boolean' : 'string';
}

/** Escapes `%`, `_` and `\` for a LIKE pattern. */
function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}

const COMPARE: Record<'gt' | 'gte' | 'lt' | 'lte', string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

/**
 * Compiles one condition. Values arrive checked and normalised for the field's
 * type (numbers as numbers, datetimes as UTC ISO strings). `ne` and `nin` hold
 * for records where the field is absent.
 */
export function compileCondition(condition: TypedCondition, params: Params): string {
  const { field, op, value, type } = condition;
  const target = sqlOf(field, type, params);
  switch (op) {
    case 'eq':
      return target.eq(value);
    case 'ne':
      return `NOT COALESCE(${target.eq(value)}, false)`;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return target.compare(op, value);
    case 'in':
      return target.member(asList(value));
    case 'nin':
      return `NOT COALESCE(${target.member(asList(value))}, false)`;
    case 'contains':
      return target.like(`%${likeEscape(String(value))}%`);
    case 'startsWith':
      return target.like(`${likeEscape(String(value))}%`);
    case 'endsWith':
      return target.like(`%${likeEscape(String(value))}`);
    case 'hasAll':
      return `${target.json} @> ${params.add(JSON.stringify(value), 'jsonb')}`;
    case 'hasAny':
      return `EXISTS (SELECT 1 FROM jsonb_array_elements(${params.add(JSON.stringify(value), 'jsonb')}) AS e(v) WHERE ${target.json} @> jsonb_build_array(e.v))`;
    case 'exists':
      return value ? `${target.json} IS NOT NULL` : `${target.json} IS NULL`;
  }
}

/** The values of in / nin (checked to be a list before they get here). */
function asList(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [value];
}

interface SqlTarget {
  /** The field as jsonb (for containment and presence). */
  readonly json: string;
  eq(value: unknown): string;
  compare(op: 'gt' | 'gte' | 'lt' | 'lte', value: unknown): string;
  /** The field equals one of the values. */
  member(values: readonly unknown[]): string;
  /** Case-insensitive LIKE with `\\` as the escape. */
  like(pattern: string): string;
}

function sqlOf(field: FieldRef, type: FieldType | 'text', params: Params): SqlTarget {
  if (field.kind === 'system') {
    const { column, cast } = SYSTEM_SQL[field.column];
    return {
      json: `to_jsonb(${column})`,
      like: (pattern) => `${column}::text ILIKE ${params.add(pattern)} ESCAPE '\\'`,
      eq: (value) => `${column} = ${params.add(value, cast)}`,
      compare: (op, value) => `${column} ${COMPARE[op]} ${params.add(value, cast)}`,
      member: (values) => `${column} = ANY(${params.add(values, `${cast}[]`)})`,
    };
  }
  const { json, text, key } = dataExpressions(field.path, params);
  if (type === 'text') {
    // Schemaless: every field compares as its text.
    return {
      json,
      like: (pattern) => `${text} ILIKE ${params.add(pattern)} ESCAPE '\\'`,
      // Values arrive as text (see check-condition); a JSON null has no text: it equals null only.
      eq: (value) => (value === null ? `${json} = 'null'::jsonb` : `${text} = ${params.add(value, 'text')}`),
      compare: (op, value) => `${text} ${COMPARE[op]} ${params.add(value, 'text')}`,
      member: (values) => `${text} = ANY(${params.add(values, 'text[]')})`,
    };
  }
  // Typed: comparisons on the key's JSON value (jsonb orders numbers by value and strings,
  // hence UTC datetimes, by text), guarded to the property's JSON type so that a value of
  // another type never matches. Equality is type-strict: 42 and "42" differ.
  const guard = `jsonb_typeof(${key}) = '${jsonType(type)}'`;
  return {
    json,
    // The text of a string field (a trigram index on it serves these).
    like: (pattern) => `(${text} ILIKE ${params.add(pattern)} ESCAPE '\\' AND jsonb_typeof(${json}) = 'string')`,
    // A JSON null equals null only, not an absent field.
    eq: (value) =>
      value === null ? `${json} = 'null'::jsonb` : `${key} = ${params.add(JSON.stringify(value), 'jsonb')}`,
    compare: (op, value) => `(${key} ${COMPARE[op]} ${params.add(JSON.stringify(value), 'jsonb')} AND ${guard})`,
    member: (values) =>
      `${key} = ANY(${params.add(
        values.map((v) => JSON.stringify(v)),
        'jsonb[]',
      )})`,
  };
}

/** Compiles a where tree; an empty `and` is TRUE and an empty `or` is FALSE. */
export function compileWhere(where: TypedWhere, params: Params): string {
  if ('condition' in where) return `(${compileCondition(where.condition, params)})`;
  if ('not' in where) return `(NOT COALESCE(${compileWhere(where.not, params)}, false))`;
  if ('and' in where)
    return where.and.length ? `(${where.and.map((w) => compileWhere(w, params)).join(' AND ')})` : 'TRUE';
  return where.or.length ? `(${where.or.map((w) => compileWhere(w, params)).join(' OR ')})` : 'FALSE';
}

/** The SQL of a system column (for sorting and cursors). */
export function systemColumn(column: SystemColumn): { column: string; cast: string } {
  return SYSTEM_SQL[column];
}

export type { Where };
