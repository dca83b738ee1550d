import { validateHeaderName, validateHeaderValue, type ServerResponse } from 'node:http';
import type { EndpointReplyResponse } from '@strata/contracts';

/** The header naming the run behind every endpoint answer (GET /function-runs/{id} shows it). */
export const RUN_ID_HEADER = 'x-strata-run-id';

/** Headers a function cannot set: the connection's own, and the ones the platform sets. */
const RESERVED_HEADERS = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'content-length',
  'proxy-authenticate',
  'proxy-authorization',
  RUN_ID_HEADER,
]);

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;

/**
 * Sends what the endpoint function answered. Headers it may not set, and names
 * or values HTTP cannot carry, are left out (never a 500). A string body with a
 * content type the function chose that is not JSON is sent as that text; any
 * other body as JSON. 204 and 304 carry no body.
 */
export function sendEndpointResponse(res: ServerResponse, response: EndpointReplyResponse): void {
  res.statusCode = response.statusCode;
  let contentType: string | undefined;
  for (const [name, value] of Object.entries(response.headers)) {
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower) || !isSendable(name, value)) continue;
    if (lower === 'content-type') contentType = value;
    res.setHeader(name, value);
  }
  if (response.statusCode === 204 || response.statusCode === 304 || response.statusCode < 200) {
    res.end();
    return;
  }
  if (typeof response.body === 'string' && contentType !== undefined && !JSON_TYPE.test(contentType)) {
    send(res, Buffer.from(response.body, 'utf8'));
    return;
  }
  if (contentType === undefined) res.setHeader('content-type', 'application/json; charset=utf-8');
  send(res, Buffer.from(JSON.stringify(response.body ?? null), 'utf8'));
}

/** The body with its length (a HEAD request's answer carries the length and no body: node:http leaves it out). */
function send(res: ServerResponse, body: Buffer): void {
  res.setHeader('content-length', body.length);
  res.end(body);
}

function isSendable(name: string, value: string): boolean {
  try {
    validateHeaderName(name);
    validateHeaderValue(name, value);
    return true;
  } catch {
    return false;
  }
}
