import { StrataException } from '@strata/platform';
import { isPlainObject } from '../schema/issues.js';

const COMBINATORS = new Set(['and', 'or', 'not']);

/** Field conditions in a canonical `where` (combinators do not count); walked without recursion. */
export function countConditions(where: unknown): number {
  let n = 0;
  const stack: unknown[] = [where];
  while (stack.length) {
    const node = stack.pop();
    if (Array.isArray(node)) for (const item of node as unknown[]) stack.push(item);
    else if (isPlainObject(node)) {
      for (const [key, value] of Object.entries(node)) {
        if (COMBINATORS.has(key)) stack.push(value);
        else n++;
      }
    }
  }
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
