import { StrataException } from '@strata/platform';

/**
 * The version a caller read, from `If-Match` (`3`, `"3"` or `W/"3"`); undefined
 * when the header is absent. Anything else is a 400.
 */
export function parseIfMatch(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === '' || header.trim() === '*') return undefined;
  const m = /^\s*(?:W\/)?"?(\d{1,9})"?\s*$/.exec(header);
  const version = m ? Number(m[1]) : NaN;
  if (!Number.isInteger(version) || version < 1) {
    throw StrataException.validation([{ field: 'If-Match', message: 'must be the record version read, such as "3"' }]);
  }
  return version;
}
