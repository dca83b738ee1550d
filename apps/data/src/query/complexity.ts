import { StrataException } from '@strata/platform';
import { isPlainObject } from '../schema/issues.js';

const COMBINATORS = new Set(['and', 'or', 'not']);

/** Field conditions in a canonical `where` (combinators do not count). */
export function countConditions(where: unknown): number {
  if (Array.isArray(where)) return where.reduce((n: number, w) => n + countConditions(w), 0);
  if (!isPlainObject(where)) return 0;
  let n = 0;
  for (const [key, value] of Object.entries(where)) n += COMBINATORS.has(key) ? countConditions(value) : 1;
  return n;
}

/** 400 "Query complexity limit exceeded" beyond DATA_QUERY_MAX_CONDITIONS conditions. */
export function checkComplexity(where: unknown, maxConditions: number): void {
  const conditions = countConditions(where);
  if (conditions > maxConditions) {
    throw StrataException.validation(
      [
        {
          field: 'where',
          message: `holds ${conditions} conditions; the limit is ${maxConditions} (DATA_QUERY_MAX_CONDITIONS)`,
        },
      ],
      'Query complexity limit exceeded',
    );
  }
}
