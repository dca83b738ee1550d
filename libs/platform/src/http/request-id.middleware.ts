import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';

export const REQUEST_ID_HEADER = 'x-request-id';
const REQUEST_ID = Symbol('strata:request-id');
const ACCEPTABLE = /^[A-Za-z0-9._:-]{8,128}$/;

type WithRequestId = IncomingMessage & { [REQUEST_ID]?: string };

/**
 * Gives a request its id: the caller's (or the gateway's) `x-request-id` when it
 * is well formed, a new UUID otherwise. Echoed on the response and put in errors.
 */
export function assignRequestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers[REQUEST_ID_HEADER];
  const id = typeof incoming === 'string' && ACCEPTABLE.test(incoming) ? incoming : randomUUID();
  (req as WithRequestId)[REQUEST_ID] = id;
  req.headers[REQUEST_ID_HEADER] = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

/** {@link assignRequestId} for every request, as the first middleware. */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  assignRequestId(req, res);
  next();
}

export function requestIdOf(req: IncomingMessage): string | undefined {
  return (req as WithRequestId)[REQUEST_ID];
}
