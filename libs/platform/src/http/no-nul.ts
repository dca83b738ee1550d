import type { IncomingMessage } from 'node:http';

/** Thrown by the JSON parser's `verify` hook; body-parser turns its status into the response. */
class NulCharacterError extends Error {
  readonly status = 400;
  readonly expose = true;
  readonly type = 'entity.verify.failed';
}

/**
 * A `verify` hook for express.json: PostgreSQL's jsonb cannot store the NUL
 * character (`\u0000`), so a body carrying one in any string or key is a 400
 * before it reaches a service, not a 500 at the INSERT. Cheap: bodies without
 * the escape sequence are not looked at twice.
 */
export function refuseNulCharacters(_req: IncomingMessage, _res: unknown, buf: Buffer): void {
  if (!buf.includes('\\u0000')) return;
  let found = false;
  try {
    JSON.parse(buf.toString('utf8'), (key, value: unknown) => {
      if (key.includes('\u0000') || (typeof value === 'string' && value.includes('\u0000'))) found = true;
      return value;
    });
  } catch {
    return; // not JSON: the parser reports that itself
  }
  if (found) throw new NulCharacterError('Strings and keys must not contain the NUL character (\\u0000)');
}
