import { ID_FORMATS } from '@strata/contracts';
import { StrataException } from '@strata/platform';

interface CursorBody {
  /** Format version. */
  readonly v: 1;
  /** The sort the cursor belongs to, as requested (`-price,name`). */
  readonly s: string;
  /** Sort-key texts of the last row returned, then its id. */
  readonly k: readonly string[];
  readonly id: string;
}

/**
 * Opaque keyset cursors: base64url JSON of the last row's sort keys and id.
 * A cursor only continues the sort it was made for; it carries no scope (the
 * collection and workspace come from the request), so a forged one can move
 * the start of a page but never widen what the caller may read.
 */
export function encodeCursor(sort: string, keys: readonly string[], id: string): string {
  const body: CursorBody = { v: 1, s: sort, k: keys, id };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

export function decodeCursor(cursor: string, sort: string, keyCount: number): { keys: string[]; id: string } {
  const fail = (message: string) => StrataException.validation([{ field: 'cursor', message }]);
  let body: Partial<CursorBody>;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<CursorBody>;
  } catch {
    throw fail('is not a cursor returned by this API');
  }
  if (
    body?.v !== 1 ||
    typeof body.id !== 'string' ||
    !ID_FORMATS.uuid.test(body.id) ||
    !Array.isArray(body.k) ||
    body.k.length !== keyCount ||
    body.k.some((k: unknown) => typeof k !== 'string')
  ) {
    throw fail('is not a cursor returned by this API');
  }
  if (body.s !== sort) throw fail(`belongs to another sort ("${body.s ?? ''}"): pass the same sort as the first page`);
  return { keys: body.k.map(String), id: body.id };
}
