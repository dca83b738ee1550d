import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';

const TRANSFER_ENCODING_TOKEN = /(^|,)\s*transfer-encoding\s*($|,)/i;

/**
 * The headers a routed request carries to its service: the caller's, as they
 * came, with `X-Forwarded-For`, `-Port`, `-Proto` and `-Host` set where the
 * caller sent none (a caller's own are kept, as the earlier proxy kept them),
 * `Content-Length: 0` on a DELETE or OPTIONS without a body, and
 * `Connection: close` for a chunked body (its connection is not reused).
 */
export function forwardedHeaders(req: IncomingMessage): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = { ...req.headers };
  if (
    (req.method === 'DELETE' || req.method === 'OPTIONS') &&
    headers['content-length'] === undefined &&
    headers['transfer-encoding'] === undefined
  ) {
    headers['content-length'] = '0';
  }
  const encrypted = (req.socket as Partial<TLSSocket>).encrypted === true;
  if (!headers['x-forwarded-for'] && req.socket.remoteAddress !== undefined) {
    headers['x-forwarded-for'] = req.socket.remoteAddress;
  }
  if (!headers['x-forwarded-port']) headers['x-forwarded-port'] = portOf(headers.host, encrypted);
  if (!headers['x-forwarded-proto']) headers['x-forwarded-proto'] = encrypted ? 'https' : 'http';
  headers['x-forwarded-host'] = headers['x-forwarded-host'] || headers.host || '';
  const connection = headers.connection;
  if (
    headers['transfer-encoding'] !== undefined ||
    (typeof connection === 'string' && TRANSFER_ENCODING_TOKEN.test(connection))
  ) {
    headers.connection = 'close';
  }
  return headers;
}

function portOf(host: string | undefined, encrypted: boolean): string {
  const port = host === undefined ? undefined : /:(\d+)/.exec(host)?.[1];
  return port ?? (encrypted ? '443' : '80');
}

/**
 * Copies a service's answer headers onto the gateway's response, as they came,
 * except: no `Transfer-Encoding` to an HTTP/1.0 caller or on a 204/304, and a
 * `Connection` header the caller's own (keep-alive by default) when the
 * service sent none.
 */
export function responseHeaders(req: IncomingMessage, answer: IncomingMessage, res: ServerResponse): void {
  const headers = answer.headers;
  const status = answer.statusCode;
  if (req.httpVersion === '1.0' || status === 204 || status === 304) delete headers['transfer-encoding'];
  if (req.httpVersion === '1.0') headers.connection = req.headers.connection || 'close';
  else if (!headers.connection) headers.connection = req.headers.connection || 'keep-alive';
  for (const key of Object.keys(headers)) {
    const value = headers[key];
    if (value === undefined) continue;
    try {
      res.setHeader(key, value);
    } catch {
      // A header Node refuses to send (an invalid character): left out, as before.
    }
  }
}
