import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode } from '@strata/contracts';
import { renderError, requestIdOf } from '@strata/platform';

/** A JSON answer, as Express's `res.json` gave it (no body on a HEAD request). */
export function sendJson(req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(req.method === 'HEAD' ? undefined : text);
}

/** A 404 in the general error shape (or the endpoints' own). */
export function notFound(
  req: IncomingMessage,
  res: ServerResponse,
  message: string,
  shape: 'general' | 'functions' = 'general',
): void {
  sendJson(
    req,
    res,
    404,
    renderError(shape, { status: 404, code: ErrorCode.NOT_FOUND, message, requestId: requestIdOf(req) }),
  );
}

/** The path of a request's URL, without its query (an absolute-form URL gives its path). */
export function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const query = raw.indexOf('?');
  const target = query === -1 ? raw : raw.slice(0, query);
  if (target.startsWith('/')) return target;
  try {
    return new URL(target).pathname;
  } catch {
    return target;
  }
}
