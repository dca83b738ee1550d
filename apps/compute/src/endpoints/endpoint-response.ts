import { validateHeaderName, validateHeaderValue, type ServerResponse } from 'node:http';
import type { EndpointReplyResponse } from '@strata/contracts';
import {
  acceptedCookie,
  acceptedLocation,
  contentSecurityPolicy,
  ENDPOINT_SECURITY_HEADERS,
  REFUSED_HEADERS,
  type CookiePolicy,
} from './endpoint-response-policy.js';

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
  'x-content-type-options',
]);

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;

/** Marks `res` as an endpoint's answer, whatever it turns out to be (the function's, or an error). */
export function setEndpointSecurityHeaders(res: ServerResponse): void {
  for (const [name, value] of Object.entries(ENDPOINT_SECURITY_HEADERS)) res.setHeader(name, value);
}

/**
 * Sends what the endpoint function answered. Headers it may not set, and names
 * or values HTTP cannot carry, are left out (never a 500); its cookies only as
 * `cookies` lets them through, a redirect only to an http(s) URL, its own
 * content security policy only beside the platform's sandbox
 * (endpoint-response-policy.ts). A string body with a content type the
 * function chose that is not JSON is sent as that text; any other body as
 * JSON. 204 and 304 carry no body.
 */
export function sendEndpointResponse(
  res: ServerResponse,
  response: EndpointReplyResponse,
  cookies: CookiePolicy,
): void {
  setEndpointSecurityHeaders(res);
  res.statusCode = response.statusCode;
  let contentType: string | undefined;
  for (const [name, given] of Object.entries(response.headers)) {
    const lower = name.toLowerCase();
    if (RESERVED_HEADERS.has(lower) || REFUSED_HEADERS.has(lower) || !isSendable(name, given)) continue;
    if (lower === 'location' && !acceptedLocation(given)) continue;
    if (lower === 'content-security-policy') {
      res.setHeader(lower, contentSecurityPolicy(given));
      continue;
    }
    const value = lower === 'set-cookie' ? acceptedCookie(given, cookies) : given;
    if (value === undefined) continue;
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
