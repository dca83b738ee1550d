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

/** `r.data #> $n` (jsonb at the path) and `r.data #>> $n` (its text), the path bound as text[]. */
function dataExpressions(path: readonly string[], params: Params): { json: string; text: string } {
  const p = params.add(path, 'text[]');
  return { json: `(r.data #> ${p})`, text: `(r.data #>> ${p})` };
}

/** The value of a typed data field as SQL of its type, NULL when the stored JSON has another type. */
function typedData(json: string, type: FieldType): string {
  switch (type) {
    case 'number':
      return `(CASE WHEN jsonb_typeof(${json}) = 'number' THEN (${json})::numeric END)`;
    case 'boolean':
      return `(CASE WHEN jsonb_typeof(${json}) = 'boolean' THEN (${json})::boolean END)`;
    default:
      // strings, datetimes (stored as UTC ISO, so text order is time order), uuids, references
      return `(CASE WHEN jsonb_typeof(${json}) = 'string' THEN ${json} #>> '{}' END)`;
  }
}

const SQL_CAST: Partial<Record<FieldType | 'text', string>> = { number: 'numeric', boolean: 'boolean' };

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
      return `${target.scalar} ${COMPARE[op]} ${params.add(value, target.cast)}`;
    case 'in':
      return `${target.scalar} = ANY(${params.add(value, `${target.cast}[]`)})`;
    case 'nin':
      return `NOT COALESCE(${target.scalar} = ANY(${params.add(value, `${target.cast}[]`)}), false)`;
    case 'contains':
      return `${target.scalar} ILIKE ${params.add(`%${likeEscape(String(value))}%`)} ESCAPE '\\'`;
    case 'startsWith':
      return `${target.scalar} ILIKE ${params.add(`${likeEscape(String(value))}%`)} ESCAPE '\\'`;
    case 'endsWith':
      return `${target.scalar} ILIKE ${params.add(`%${likeEscape(String(value))}`)} ESCAPE '\\'`;
    case 'hasAll':
      return `${target.json} @> ${params.add(JSON.stringify(value), 'jsonb')}`;
    case 'hasAny':
      return `EXISTS (SELECT 1 FROM jsonb_array_elements(${params.add(JSON.stringify(value), 'jsonb')}) AS e(v) WHERE ${target.json} @> jsonb_build_array(e.v))`;
    case 'exists':
      return value ? `${target.json} IS NOT NULL` : `${target.json} IS NULL`;
  }
}

interface SqlTarget {
  /** The field as a comparable SQL scalar. */
  readonly scalar: string;
  /** The SQL type values are bound as. */
  readonly cast: string;
  /** The field as jsonb (for containment and presence). */
  readonly json: string;
  eq(value: unknown): string;
}

function sqlOf(field: FieldRef, type: FieldType | 'text', params: Params): SqlTarget {
  if (field.kind === 'system') {
    const { column, cast } = SYSTEM_SQL[field.column];
    return {
      scalar: column,
      cast,
      json: `to_jsonb(${column})`,
      eq: (value) => `${column} = ${params.add(value, cast)}`,
    };
  }
  const { json, text } = dataExpressions(field.path, params);
  if (type === 'text') {
    // Schemaless: every field compares as its text.
    return {
      scalar: text,
      cast: 'text',
      json,
      // Values arrive as text (see check-condition); a JSON null has no text: it equals null only.
      eq: (value) => (value === null ? `${json} = 'null'::jsonb` : `${text} = ${params.add(value, 'text')}`),
    };
  }
  return {
    scalar: typedData(json, type),
    cast: SQL_CAST[type] ?? 'text',
    json,
    // Type-strict equality on the JSON itself: 42 and "42" differ.
    eq: (value) => `${json} = ${params.add(JSON.stringify(value), 'jsonb')}`,
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
