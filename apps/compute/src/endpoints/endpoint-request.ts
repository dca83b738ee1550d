import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { ErrorCode } from '@strata/contracts';
import { findJsonProblems, StrataException } from '@strata/platform';
import type { EndpointRequest, JsonValue } from '@strata/sandbox';

/**
 * Headers that carry the caller's credentials: checked by the platform, or a browser's
 * session with another site on the same domain (cookies), never passed to the function
 * (before 2026-11-27 `cookie` and `proxy-authorization` were).
 */
export const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  'x-signature',
  'x-publishable-key',
]);

/**
 * `context.req.payload`: a JSON body parsed (refused with 400 as the platform
 * refuses bad JSON: invalid UTF-8, too deep, NUL or lone surrogates), any other
 * body as UTF-8 text (415 when it is not text), no body as null.
 */
export function payloadOf(req: IncomingMessage, body: Buffer): JsonValue {
  if (body.length === 0) return null;
  const isJson = isJsonMediaType(req.headers['content-type']);
  if (!isUtf8(body)) {
    if (isJson) {
      throw StrataException.validation(
        [{ field: 'body', message: 'is not valid UTF-8' }],
        'Request body is not valid UTF-8',
      );
    }
    throw new StrataException(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'Endpoint bodies must be JSON or UTF-8 text.', [
      { field: 'body', message: 'is binary; send JSON or UTF-8 text' },
    ]);
  }
  if (!isJson) return body.toString('utf8');
  const problems = findJsonProblems(body);
  if (problems.length > 0) throw StrataException.validation(problems, 'Invalid JSON body');
  try {
    return JSON.parse(body.toString('utf8')) as JsonValue;
  } catch (err) {
    throw StrataException.validation([{ field: 'body', message: `is not valid JSON (${(err as Error).message})` }]);
  }
}

/** `application/json` or any `application/…+json`, parameters aside: the types the platform parses as JSON. */
const JSON_MEDIA_TYPE = /^\s*application\/(?:[\w.!#$&^-]+\+)?json\s*(?:;|$)/i;

export function isJsonMediaType(contentType: string | undefined): boolean {
  return contentType !== undefined && JSON_MEDIA_TYPE.test(contentType);
}

/** The query string as `name → value`, a repeated name as a list of its values. */
export function queryOf(rawQuery: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    const seen = query[name];
    query[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return { ...query };
}

/** The request headers the function sees: lower-case names, repeated ones joined, credentials left out. */
export function headersOf(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || CREDENTIAL_HEADERS.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** `context.req` of one call. */
export function endpointRequestOf(
  req: IncomingMessage & { method: string },
  path: string,
  rawQuery: string,
  payload: JsonValue,
  auth: NonNullable<EndpointRequest['auth']>,
): EndpointRequest {
  return {
    method: req.method,
    path: `/endpoints/${path}`,
    query: queryOf(rawQuery),
    headers: headersOf(req),
    payload,
    auth,
  };
}
