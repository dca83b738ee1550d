import type { Collection, FieldError } from '@strata/contracts';
import { isPlainObject, show } from '../schema/issues.js';
import { typedCondition } from '../compiler/check-condition.js';
import type { TypedSortKey } from '../compiler/compile-select.js';
import type { TypedWhere } from '../compiler/compile-where.js';
import { resolveField } from '../compiler/resolve-field.js';
import { OPERATORS, type FieldRef, type Operator, type TextSearch } from '../compiler/query.types.js';

export const CANONICAL_LIMITS = {
  maxDepth: 8,
  maxConditions: 100,
  maxSortKeys: 5,
  maxSelect: 100,
  maxInclude: 10,
} as const;

export interface CanonicalParts {
  readonly where?: TypedWhere;
  readonly sort: TypedSortKey[];
  readonly text?: TextSearch;
  readonly select?: string[];
  readonly include: string[][];
}

/**
 * Checks a canonical query definition against its collection and turns it into
 * the internal form. `where` is a map of field path to `{operator: value}`
 * (exactly one operator) with the combinators `and`, `or` and `not`; several
 * fields in one map are ANDed. Bare names must be system columns; record
 * fields are `data.`-prefixed. Every problem is reported at once, with the path
 * of the part it is in (`where.or[1].data.price`).
 */
export function parseCanonical(
  c: Collection,
  body: { where?: unknown; sort?: unknown; text?: unknown; select?: unknown; include?: unknown },
  problems: FieldError[],
): CanonicalParts {
  let conditions = 0;
  const where = (raw: unknown, path: string, depth: number): TypedWhere | undefined => {
    if (!isPlainObject(raw)) {
      problems.push({ field: path, message: 'must be an object of field conditions and and/or/not' });
      return undefined;
    }
    if (depth > CANONICAL_LIMITS.maxDepth) {
      problems.push({ field: path, message: `nests deeper than ${CANONICAL_LIMITS.maxDepth} levels` });
      return undefined;
    }
    const parts: TypedWhere[] = [];
    for (const [key, value] of Object.entries(raw)) {
      const at = `${path}.${key}`;
      if (key === 'and' || key === 'or') {
        if (!Array.isArray(value) || value.length === 0) {
          problems.push({ field: at, message: 'must be a non-empty array of conditions' });
          continue;
        }
        const children = value.map((v, i) => where(v, `${at}[${i}]`, depth + 1)).filter((w): w is TypedWhere => !!w);
        parts.push(key === 'and' ? { and: children } : { or: children });
      } else if (key === 'not') {
        const child = where(value, at, depth + 1);
        if (child) parts.push({ not: child });
      } else {
        if (++conditions > CANONICAL_LIMITS.maxConditions) {
          problems.push({ field: at, message: `a query holds at most ${CANONICAL_LIMITS.maxConditions} conditions` });
          continue;
        }
        const condition = fieldCondition(c, key, value, at, problems);
        if (condition) parts.push(condition);
      }
    }
    return parts.length === 1 ? parts[0] : { and: parts };
  };
  const parsed: CanonicalParts = {
    ...(body.where !== undefined ? optionalWhere(where(body.where, 'where', 1)) : {}),
    sort: sortKeys(c, body.sort, problems),
    ...optionalText(textSearch(c, body.text, problems)),
    ...optionalSelect(selection(c, body.select, problems)),
    include: includes(body.include, problems),
  };
  return parsed;
}

function fieldCondition(
  c: Collection,
  name: string,
  raw: unknown,
  at: string,
  problems: FieldError[],
): TypedWhere | undefined {
  const field = resolveField(name, c);
  if ('problem' in field) {
    problems.push({ field: at, message: field.problem });
    return undefined;
  }
  if (!isPlainObject(raw) || Object.keys(raw).length !== 1) {
    problems.push({ field: at, message: `must be {operator: value} with exactly one of: ${OPERATORS.join(', ')}` });
    return undefined;
  }
  const [op, value] = Object.entries(raw)[0]!;
  if (!(OPERATORS as readonly string[]).includes(op)) {
    problems.push({ field: `${at}.${op}`, message: `is not an operator (one of: ${OPERATORS.join(', ')})` });
    return undefined;
  }
  const checked = typedCondition(field, name, op as Operator, value);
  if ('problem' in checked) {
    problems.push({ field: `${at}.${op}`, message: checked.problem });
    return undefined;
  }
  return { condition: checked };
}

function sortKeys(c: Collection, raw: unknown, problems: FieldError[]): TypedSortKey[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length > CANONICAL_LIMITS.maxSortKeys) {
    problems.push({
      field: 'sort',
      message: `must be an array of at most ${CANONICAL_LIMITS.maxSortKeys} {field, direction}`,
    });
    return [];
  }
  const keys: TypedSortKey[] = [];
  raw.forEach((entry, i) => {
    const at = `sort[${i}]`;
    if (!isPlainObject(entry) || typeof entry['field'] !== 'string') {
      problems.push({ field: at, message: 'must be {field, direction}' });
      return;
    }
    const direction = entry['direction'] ?? 'asc';
    if (direction !== 'asc' && direction !== 'desc') {
      problems.push({ field: `${at}.direction`, message: `must be asc or desc (got ${show(direction)})` });
      return;
    }
    const field = resolveField(entry['field'], c);
    if ('problem' in field) problems.push({ field: `${at}.field`, message: field.problem });
    else keys.push({ field: field.ref, type: field.type, direction });
  });
  return keys;
}

function textSearch(c: Collection, raw: unknown, problems: FieldError[]): TextSearch | undefined {
  if (raw === undefined) return undefined;
  if (
    !isPlainObject(raw) ||
    typeof raw['query'] !== 'string' ||
    raw['query'].trim() === '' ||
    raw['query'].length > 500
  ) {
    problems.push({ field: 'text.query', message: 'must be a non-empty string of at most 500 characters' });
    return undefined;
  }
  const typo = raw['typoTolerance'] ?? false;
  if (typeof typo !== 'boolean') problems.push({ field: 'text.typoTolerance', message: 'must be a boolean' });
  const names = raw['fields'] ?? (c.defaultSearchField ? [`data.${c.defaultSearchField}`] : undefined);
  if (names === undefined) {
    problems.push({ field: 'text.fields', message: 'is required: this collection has no defaultSearchField' });
    return undefined;
  }
  if (!Array.isArray(names) || names.length === 0 || names.length > 10) {
    problems.push({ field: 'text.fields', message: 'must be an array of 1 to 10 field paths' });
    return undefined;
  }
  const fields: FieldRef[] = [];
  names.forEach((name, i) => {
    const field = typeof name === 'string' ? resolveField(name, c) : { problem: 'must be a field path' };
    if ('problem' in field) problems.push({ field: `text.fields[${i}]`, message: field.problem });
    else if (field.type !== 'string' && field.type !== 'text') {
      problems.push({ field: `text.fields[${i}]`, message: `${String(name)} is not a string field` });
    } else fields.push(field.ref);
  });
  return { query: raw['query'], fields, typoTolerance: typo === true };
}

function selection(c: Collection, raw: unknown, problems: FieldError[]): string[] | undefined {
  if (raw === undefined) return undefined;
  const fields = isPlainObject(raw) ? raw['fields'] : undefined;
  if (!Array.isArray(fields) || fields.length === 0 || fields.length > CANONICAL_LIMITS.maxSelect) {
    problems.push({
      field: 'select.fields',
      message: `must be an array of 1 to ${CANONICAL_LIMITS.maxSelect} field paths`,
    });
    return undefined;
  }
  const out: string[] = [];
  fields.forEach((name, i) => {
    // Selecting a secret field is allowed: the presenter masks it unless the caller holds secrets:reveal.
    const field =
      typeof name === 'string' ? resolveField(name, c, false, 'select') : { problem: 'must be a field path' };
    if ('problem' in field) problems.push({ field: `select.fields[${i}]`, message: field.problem });
    else out.push(name as string);
  });
  return out;
}

function includes(raw: unknown, problems: FieldError[]): string[][] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length > CANONICAL_LIMITS.maxInclude) {
    problems.push({
      field: 'include',
      message: `must be an array of at most ${CANONICAL_LIMITS.maxInclude} {relation}`,
    });
    return [];
  }
  const out: string[][] = [];
  raw.forEach((entry, i) => {
    const relation = isPlainObject(entry) ? entry['relation'] : undefined;
    if (typeof relation !== 'string' || !/^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*){0,2}$/.test(relation)) {
      problems.push({ field: `include[${i}].relation`, message: 'must be a reference field name, dotted for nested' });
    } else out.push(relation.split('.'));
  });
  return out;
}

const optionalWhere = (where: TypedWhere | undefined) => (where ? { where } : {});
const optionalText = (text: TextSearch | undefined) => (text ? { text } : {});
const optionalSelect = (select: string[] | undefined) => (select ? { select } : {});
