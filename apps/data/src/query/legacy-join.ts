import type { Response } from 'express';
import { setDeprecationHeaders } from '@strata/platform';
import { isPlainObject } from '../schema/issues.js';

/**
 * A definition holding the older single `join`: it still works (promoted to a one-element
 * `joins`), and the answer says it is deprecated (`Deprecation`, `Link` to the joins' docs; the
 * spec announces no sunset for it). Set before the query runs, so refusals say it too.
 */
export function flagLegacyJoin(res: Pick<Response, 'setHeader'>, definition: unknown): void {
  if (isPlainObject(definition) && definition['join'] !== undefined) {
    setDeprecationHeaders(res, { successor: '/docs/data.json#joins' });
  }
}
