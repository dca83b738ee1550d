import { ID_FORMATS } from '@strata/contracts';
import { parseIsoDatetime } from '../schema/datetime.js';
import { show } from '../schema/issues.js';
import type { TypedCondition } from './compile-where.js';
import type { ResolvedField } from './resolve-field.js';
import type { FieldType, Operator } from './query.types.js';

type Type = FieldType | 'text';

const RANGE: readonly Type[] = ['number', 'datetime', 'text'];
const LISTABLE: readonly Type[] = ['string', 'number', 'datetime', 'uuid', 'reference', 'text'];
const TEXTUAL: readonly Type[] = ['string', 'text'];
const ARRAYS: readonly Type[] = ['array', 'reference', 'text'];

/** Which operators fit which field types (eq, ne and exists fit every type). */
function fits(op: Operator, type: Type): boolean {
  switch (op) {
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return RANGE.includes(type);
    case 'in':
    case 'nin':
      return LISTABLE.includes(type);
    case 'contains':
    case 'startsWith':
    case 'endsWith':
      return TEXTUAL.includes(type);
    case 'hasAny':
    case 'hasAll':
      return ARRAYS.includes(type);
    case 'eq':
    case 'ne':
    case 'exists':
      return true;
  }
}

const UUID = ID_FORMATS.uuid;

/** One comparable value for a field of `type`, normalised; or why it does not fit. */
function scalar(type: Type, value: unknown): { value: unknown } | { problem: string } {
  switch (type) {
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
        ? { value }
        : { problem: `expects a number, got ${show(value)}` };
    case 'boolean':
      return typeof value === 'boolean' ? { value } : { problem: `expects a boolean, got ${show(value)}` };
    case 'datetime': {
      const ms = typeof value === 'string' ? parseIsoDatetime(value) : undefined;
      return ms === undefined
        ? { problem: `expects an ISO 8601 date-time, got ${show(value)}` }
        : { value: new Date(ms).toISOString() };
    }
    case 'uuid':
      return typeof value === 'string' && UUID.test(value)
        ? { value }
        : { problem: `expects a UUID, got ${show(value)}` };
    case 'reference':
      return typeof value === 'string' || typeof value === 'number'
        ? { value }
        : { problem: `expects a record key, got ${show(value)}` };
    case 'text':
      return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
        ? { value: String(value) }
        : { problem: `expects a string, got ${show(value)}` };
    case 'string':
      return typeof value === 'string' ? { value } : { problem: `expects a string, got ${show(value)}` };
    case 'array':
    case 'object':
      return { value };
  }
}

/**
 * Checks that an operator fits the field's type and that the value fits both,
 * without coercion: a string is not a number. Datetimes are normalised to UTC.
 */
export function typedCondition(
  field: ResolvedField,
  name: string,
  op: Operator,
  value: unknown,
): TypedCondition | { problem: string } {
  const type = field.type;
  if (!fits(op, type))
    return { problem: `operator ${op} does not apply to ${name} (${type === 'text' ? 'compared as text' : type})` };
  const make = (v: unknown): TypedCondition => ({ field: field.ref, op, value: v, type });
  switch (op) {
    case 'exists':
      return typeof value === 'boolean' ? make(value) : { problem: `exists expects true or false, got ${show(value)}` };
    case 'in':
    case 'nin': {
      if (!Array.isArray(value) || value.length === 0 || value.length > 1000) {
        return { problem: `${op} expects a list of 1 to 1000 values` };
      }
      const out: unknown[] = [];
      for (const v of value) {
        const checked = scalar(type, v);
        if ('problem' in checked) return { problem: `${op} on ${name} ${checked.problem}` };
        out.push(checked.value);
      }
      return make(out);
    }
    case 'hasAny':
    case 'hasAll':
      if (!Array.isArray(value) || value.length === 0 || value.length > 1000) {
        return { problem: `${op} expects a list of 1 to 1000 values` };
      }
      if (value.some((v) => v === null || typeof v === 'object'))
        return { problem: `${op} expects a list of plain values` };
      return make(value);
    case 'contains':
    case 'startsWith':
    case 'endsWith':
      return typeof value === 'string' && value.length > 0
        ? make(value)
        : { problem: `${op} expects a non-empty string` };
    case 'eq':
    case 'ne':
      if (type === 'array' || type === 'object') return make(value);
      if (value === null) return make(null);
      break;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      break;
  }
  const checked = scalar(type, value);
  return 'problem' in checked ? { problem: `${op} on ${name} ${checked.problem}` } : make(checked.value);
}

/** A list-filter value (always text) read as the field's type: `42` is a number for a number field. */
export function fromText(type: Type, text: string): unknown {
  switch (type) {
    case 'number':
      return /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text.trim()) ? Number(text) : text;
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : text;
    case 'string':
    case 'text':
    case 'datetime':
    case 'uuid':
    case 'reference':
    case 'array':
    case 'object':
      return text;
  }
}
