import type { Collection } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import type { FieldError } from '@strata/contracts';
import { typedCondition, fromText } from '../../compiler/check-condition.js';
import { DEFAULT_SORT, type CompilableQuery, type TypedSortKey } from '../../compiler/compile-select.js';
import type { TypedCondition, TypedWhere } from '../../compiler/compile-where.js';
import { decodeCursor } from '../../compiler/cursor.js';
import { FilterSyntaxError, parseFilter, type FilterTerm } from './filter-expression.js';
import { resolveField } from '../../compiler/resolve-field.js';
import type { Operator } from '../../compiler/query.types.js';

export const MAX_SORT_KEYS = 5;
/** A Map, so that `data.x[constructor]` names no operator. */
const LEGACY_OPS: ReadonlyMap<string, Operator> = new Map([
  ['gt', 'gt'],
  ['gte', 'gte'],
  ['lt', 'lt'],
  ['lte', 'lte'],
  ['ne', 'ne'],
  ['in', 'in'],
  ['contains', 'contains'],
  ['startswith', 'startsWith'],
]);

export interface ListParams {
  readonly filter?: string | undefined;
  readonly sort?: string | undefined;
  readonly limit?: number | undefined;
  readonly offset?: number | undefined;
  readonly cursor?: string | undefined;
  /** Legacy `data.<field>` / `data.<field>[op]` parameters, as received. */
  readonly legacy: Readonly<Record<string, unknown>>;
}

/** Splits the legacy `data.*` parameters from the others. */
export function splitLegacy(query: Readonly<Record<string, unknown>>): {
  legacy: Record<string, unknown>;
  rest: Record<string, unknown>;
} {
  // fromEntries defines own properties: a parameter named __proto__ stays a parameter.
  const entries = Object.entries(query);
  return {
    legacy: Object.fromEntries(entries.filter(([key]) => key.startsWith('data.'))),
    rest: Object.fromEntries(entries.filter(([key]) => !key.startsWith('data.'))),
  };
}

/**
 * Turns the list parameters into a query checked against the collection: the
 * filter expression and the legacy parameters become conditions (ANDed), the
 * sort resolves to typed keys, a cursor to its keyset position. Every problem
 * is reported at once, with the parameter it is in.
 */
export function buildListQuery(
  scope: WorkspaceScope,
  c: Collection,
  p: ListParams,
): CompilableQuery & { sortSpec: string } {
  const problems: FieldError[] = [];
  const conditions: TypedCondition[] = [];
  const add = (term: FilterTerm, param: string): void => {
    const field = resolveField(term.key, c, true);
    if ('problem' in field) {
      problems.push({ field: param, message: field.problem });
      return;
    }
    const values = term.values.map((v) => fromText(field.type, v));
    const checked = typedCondition(
      field,
      term.key,
      term.op,
      term.op === 'in' || term.op === 'nin' ? values : values[0],
    );
    if ('problem' in checked) problems.push({ field: param, message: checked.problem });
    else conditions.push(checked);
  };
  if (p.filter !== undefined) {
    try {
      for (const term of parseFilter(p.filter)) add(term, 'filter');
    } catch (err) {
      if (!(err instanceof FilterSyntaxError)) throw err;
      problems.push({ field: 'filter', message: err.message });
    }
  }
  for (const [key, raw] of Object.entries(p.legacy)) {
    const m = /^data\.([A-Za-z0-9_.]+?)(?:\[([a-z]+)\])?$/.exec(key);
    const op = m ? (m[2] === undefined ? 'eq' : LEGACY_OPS.get(m[2])) : undefined;
    if (!m || !op) {
      problems.push({
        field: key,
        message: `is not a filter parameter (data.<field> or data.<field>[${[...LEGACY_OPS.keys()].join('|')}])`,
      });
      continue;
    }
    if (typeof raw !== 'string') {
      problems.push({ field: key, message: 'must be given once' });
      continue;
    }
    add({ key: `data.${m[1]}`, op, values: op === 'in' ? raw.split(',') : [raw] }, key);
  }
  const sortSpec = p.sort ?? '';
  const sort: TypedSortKey[] = [];
  for (const part of sortSpec ? sortSpec.split(',') : []) {
    const direction = part.startsWith('-') ? 'desc' : 'asc';
    const name = part.replace(/^[-+]/, '').trim();
    const field = resolveField(name, c, true);
    if ('problem' in field) problems.push({ field: 'sort', message: field.problem });
    else sort.push({ field: field.ref, type: field.type, direction });
  }
  if (sort.length > MAX_SORT_KEYS) problems.push({ field: 'sort', message: `names at most ${MAX_SORT_KEYS} fields` });
  if (sort.length === 0) sort.push(...DEFAULT_SORT);
  if (p.cursor !== undefined && p.offset) problems.push({ field: 'cursor', message: 'cannot be combined with offset' });
  if (problems.length) throw StrataException.validation(problems);
  const where: TypedWhere | undefined = conditions.length
    ? { and: conditions.map((condition) => ({ condition })) }
    : undefined;
  return {
    scope,
    collectionId: c.id,
    ...(where ? { where } : {}),
    sort,
    sortSpec,
    limit: p.limit ?? 20,
    ...(p.offset ? { offset: p.offset } : {}),
    ...(p.cursor !== undefined ? { after: decodeCursor(p.cursor, sortSpec, sort.length) } : {}),
  };
}
