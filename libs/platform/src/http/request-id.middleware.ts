import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

export const REQUEST_ID_HEADER = 'x-request-id';
const REQUEST_ID = Symbol('strata:request-id');
const ACCEPTABLE = /^[A-Za-z0-9._:-]{8,128}$/;

type WithRequestId = Request & { [REQUEST_ID]?: string };

/**
 * Gives every request an id: the caller's (or the gateway's) `x-request-id` when it
 * is well formed, a new UUID otherwise. Echoed on the response and put in errors.
 */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.headers[REQUEST_ID_HEADER];
  const id = typeof incoming === 'string' && ACCEPTABLE.test(incoming) ? incoming : randomUUID();
  (req as WithRequestId)[REQUEST_ID] = id;
  req.headers[REQUEST_ID_HEADER] = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  next();
}

export function requestIdOf(req: Request): string | undefined {
  return (req as WithRequestId)[REQUEST_ID];
}
