import type { NextFunction, Request, Response } from 'express';
import { StrataException } from '../errors/strata.exception.js';
import { findFormTextProblems, findPathProblems } from './text-checks.js';

/**
 * Refuses, before routing, a request target whose path segments or query
 * parameters are not well-formed percent-encoded UTF-8, or whose query
 * parameters decode to NUL (400, naming the parameter). Express's query parser
 * would otherwise keep a malformed escape as it is or replace bad bytes with
 * U+FFFD, and PostgreSQL refuses NUL with a 500. NUL in a path segment is left
 * to {@link PathParamsGuard}, which knows the route parameter's name.
 */
export function urlCheckMiddleware(req: Request, _res: Response, next: NextFunction): void {
  const url = req.url;
  if (!url.includes('%')) return next();
  const q = url.indexOf('?');
  const problems = [
    ...findPathProblems(q === -1 ? url : url.slice(0, q)),
    ...(q === -1 ? [] : findFormTextProblems(url.slice(q + 1))),
  ];
  if (problems.length === 0) return next();
  const first = problems[0]!;
  next(StrataException.validation(problems, `Invalid request URL: ${first.field} ${first.message}`));
}
