import type { FieldError } from '@strata/contracts';
import { FUNCTION_SORT_FIELDS, type FunctionSearchField, type FunctionSortField } from './functions.repository.js';

export interface SortKey {
  readonly field: FunctionSortField;
  readonly direction: 'asc' | 'desc';
}

/** A checked function list query, defaults applied. */
export interface FunctionListQuery {
  readonly search: string | undefined;
  readonly searchField: FunctionSearchField;
  readonly limit: number;
  readonly page: number;
  readonly sort: readonly SortKey[];
}

export const DEFAULT_FUNCTION_SORT: readonly SortKey[] = [{ field: 'createdAt', direction: 'desc' }];

/**
 * Reads `sort`: a JSON array of `{field, direction}` (direction `asc` or `desc`,
 * any case, default `asc`), at most one entry per field. Problems name their entry.
 */
export function parseFunctionSort(text: string | undefined): { sort: SortKey[] } | { errors: FieldError[] } {
  if (text === undefined || text.trim() === '') return { sort: [...DEFAULT_FUNCTION_SORT] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { errors: [{ field: 'sort', message: 'must be a JSON array of {field, direction}' }] };
  }
  if (!Array.isArray(parsed))
    return { errors: [{ field: 'sort', message: 'must be a JSON array of {field, direction}' }] };
  if (parsed.length > FUNCTION_SORT_FIELDS.length) {
    return { errors: [{ field: 'sort', message: `must have at most ${FUNCTION_SORT_FIELDS.length} entries` }] };
  }
  const errors: FieldError[] = [];
  const sort: SortKey[] = [];
  parsed.forEach((entry: unknown, i) => {
    const at = `sort[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      errors.push({ field: at, message: 'must be an object {field, direction}' });
      return;
    }
    const { field, direction, ...rest } = entry as Record<string, unknown>;
    for (const key of Object.keys(rest)) errors.push({ field: `${at}.${key}`, message: 'is not a sort option' });
    if (typeof field !== 'string' || !(FUNCTION_SORT_FIELDS as readonly string[]).includes(field)) {
      errors.push({ field: `${at}.field`, message: `must be one of ${FUNCTION_SORT_FIELDS.join(', ')}` });
    } else if (sort.some((s) => s.field === field)) {
      errors.push({ field: `${at}.field`, message: `${field} is sorted on already` });
    }
    const dir = direction === undefined ? 'asc' : typeof direction === 'string' ? direction.toLowerCase() : '';
    if (dir !== 'asc' && dir !== 'desc') errors.push({ field: `${at}.direction`, message: 'must be asc or desc' });
    if (!errors.length) sort.push({ field: field as FunctionSortField, direction: dir as 'asc' | 'desc' });
  });
  return errors.length ? { errors } : { sort };
}
