import type { FieldError } from '@strata/contracts';
import { FUNCTION_SORT_FIELDS, type FunctionListQuery, type SortKey } from './functions.repository.js';

export type { FunctionListQuery, SortKey };

export const DEFAULT_FUNCTION_SORT: readonly SortKey[] = [{ field: 'createdAt', direction: 'desc' }];

/**
 * Reads `sort`: a JSON array of `{field, direction}` (direction `asc` or `desc`,
 * any case, default `asc`), at most one entry per field. Problems name their entry.
 */
export function parseFunctionSort(text: string | undefined): { sort: SortKey[] } | { errors: FieldError[] } {
  return parseSortParam(text, FUNCTION_SORT_FIELDS, DEFAULT_FUNCTION_SORT);
}

/** `parseFunctionSort` for any list: `fields` are the sortable ones, `defaults` the sort when none is given. */
export function parseSortParam<F extends string>(
  text: string | undefined,
  fields: readonly F[],
  defaults: readonly SortKey<F>[],
): { sort: SortKey<F>[] } | { errors: FieldError[] } {
  if (text === undefined || text.trim() === '') return { sort: [...defaults] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { errors: [{ field: 'sort', message: 'must be a JSON array of {field, direction}' }] };
  }
  if (!Array.isArray(parsed))
    return { errors: [{ field: 'sort', message: 'must be a JSON array of {field, direction}' }] };
  // No keys is the default order (newest first), never whatever order the database happens to give.
  if (parsed.length === 0) return { sort: [...defaults] };
  if (parsed.length > fields.length) {
    return { errors: [{ field: 'sort', message: `must have at most ${fields.length} entries` }] };
  }
  const errors: FieldError[] = [];
  const sort: SortKey<F>[] = [];
  parsed.forEach((entry: unknown, i) => {
    const at = `sort[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      errors.push({ field: at, message: 'must be an object {field, direction}' });
      return;
    }
    const { field, direction, ...rest } = entry as Record<string, unknown>;
    for (const key of Object.keys(rest)) errors.push({ field: `${at}.${key}`, message: 'is not a sort option' });
    if (typeof field !== 'string' || !(fields as readonly string[]).includes(field)) {
      errors.push({ field: `${at}.field`, message: `must be one of ${fields.join(', ')}` });
    } else if (sort.some((s) => s.field === field)) {
      errors.push({ field: `${at}.field`, message: `${field} is sorted on already` });
    }
    const dir = direction === undefined ? 'asc' : typeof direction === 'string' ? direction.toLowerCase() : '';
    if (dir !== 'asc' && dir !== 'desc') errors.push({ field: `${at}.direction`, message: 'must be asc or desc' });
    if (!errors.length) sort.push({ field: field as F, direction: dir as 'asc' | 'desc' });
  });
  return errors.length ? { errors } : { sort };
}
