import type { NextFunction, Request, Response } from 'express';
import { setDeprecationHeaders } from '@strata/platform';
import { isPlainObject } from '../schema/issues.js';
import { JOINS_SUCCESSOR } from './saved/deprecated-forms.js';
import { SAVED_QUERIES_SUNSET } from './saved/deprecated-routes.js';

/** `POST {data_base}/records/query`: the definition is the body. */
const CANONICAL_QUERY = /^\/data\/workspace\/[^/]+\/api\/v1\/records\/query\/?$/i;
/** `POST {data_base}/saved-queries` and `…/{resource}/test` (and the `/smart-queries` alias): the definition is `query`. */
const SAVED_QUERY = /^\/data\/workspace\/[^/]+\/api\/v1\/(?:saved|smart)-queries(?:\/[^/]+\/test)?\/?$/i;

/**
 * A definition holding the older single `join` still works (promoted to a one-element
 * `joins`), and the answer says it is deprecated (`Deprecation`, `Link` to the joins' docs and
 * `Sunset` with the other saved-query forms: the spec announces no date of its own for it). A
 * middleware after body parsing and before the guards, so every answer to such a request
 * carries it, refusals (401, 403, 400) included. A saved query holding one is told of at each
 * execution, by the saved-query routes.
 */
export function legacyJoinMiddleware(req: Request, res: Response, next: NextFunction): void {
  if (req.method === 'POST') {
    const body: unknown = req.body;
    const definition = CANONICAL_QUERY.test(req.path)
      ? body
      : SAVED_QUERY.test(req.path) && isPlainObject(body)
        ? body['query']
        : undefined;
    if (isPlainObject(definition) && definition['join'] !== undefined) {
      setDeprecationHeaders(res, { sunset: SAVED_QUERIES_SUNSET, successor: JOINS_SUCCESSOR });
    }
  }
  next();
}
