import type { IncomingMessage, ServerResponse } from 'node:http';

const EXPOSED = 'x-request-id, x-ratelimit-limit, x-ratelimit-remaining, retry-after, deprecation, sunset, link';

/**
 * CORS for the allowed origins (`*`: any). Answers a preflight itself (204) and
 * returns true then; otherwise sets the headers an allowed origin needs.
 */
export function applyCors(origins: readonly string[], req: IncomingMessage, res: ServerResponse): boolean {
  const origin = req.headers.origin;
  if (!origin || !(origins.includes('*') || origins.includes(origin))) return false;
  res.setHeader('Access-Control-Allow-Origin', origins.includes('*') ? '*' : origin);
  res.setHeader('Vary', 'Origin');
  res.setHeader('Access-Control-Expose-Headers', EXPOSED);
  if (req.method !== 'OPTIONS') return false;
  res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS');
  res.setHeader(
    'Access-Control-Allow-Headers',
    req.headers['access-control-request-headers'] ?? 'authorization, content-type',
  );
  res.setHeader('Access-Control-Max-Age', '600');
  res.statusCode = 204;
  res.end();
  return true;
}
