import { isUtf8 } from 'node:buffer';
import type { IncomingHttpHeaders } from 'node:http';

/** Headers whose values are credentials: masked wherever an arrival is shown. */
export const SENSITIVE_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'x-publishable-key',
]);

export const MASK = '********';

/** The request headers as stored: lower-case names, repeated ones joined. */
export function headersOf(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** Headers with credential values masked (details, and what a function receives). */
export function maskedHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, SENSITIVE_HEADERS.has(name) ? MASK : value]),
  );
}

/**
 * The body as a function or an operator sees it: parsed JSON when it is JSON,
 * UTF-8 text otherwise, and base64 (with `bodyEncoding: 'base64'`) when it is
 * not text. `null` when there is none.
 */
export function bodyOf(body: Buffer, contentType: string | null): { body: unknown; bodyEncoding?: 'base64' } {
  if (body.length === 0) return { body: null };
  if (!isUtf8(body)) return { body: body.toString('base64'), bodyEncoding: 'base64' };
  const text = body.toString('utf8');
  if (contentType !== null && /^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType)) {
    try {
      return { body: JSON.parse(text) as unknown };
    } catch {
      return { body: text };
    }
  }
  return { body: text };
}
