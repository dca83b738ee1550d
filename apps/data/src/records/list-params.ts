import type { Response } from 'express';
import { createValidationPipe, setDeprecationHeaders } from '@strata/platform';
import { splitLegacy } from './list/list-request.js';
import { ListRecordsQuery } from './dto/record.requests.js';

/** The legacy URL-parameter filters sunset with the older records list. */
export const LEGACY_LIST_SUNSET = '2026-09-10';

const pipe = createValidationPipe();

/**
 * Validates the list's query parameters. The legacy `data.<field>[op]=` filters
 * cannot be declared on a DTO (their names are the fields), so they are split
 * off first and checked by the query builder; using them, or `pageSize`, marks
 * the response deprecated (Deprecation, Sunset, Link to the `filter` form).
 */
export async function listParams(
  raw: Record<string, unknown>,
  res: Response,
): Promise<{ query: ListRecordsQuery; legacy: Record<string, unknown> }> {
  const { legacy, rest } = splitLegacy(raw);
  const query = (await pipe.transform(rest, { type: 'query', metatype: ListRecordsQuery })) as ListRecordsQuery;
  if (Object.keys(legacy).length || query.pageSize !== undefined) {
    setDeprecationHeaders(res, { sunset: LEGACY_LIST_SUNSET, successor: '/docs/data.json#filter' });
  }
  return { query, legacy };
}
