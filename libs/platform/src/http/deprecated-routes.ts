import type { NextFunction, Request, Response } from 'express';
import { setDeprecationHeaders } from './deprecation-headers.js';

/** A deprecated variant of a route, known by its method and path before anything else runs. */
export interface DeprecatedRoute {
  /** Only this method (upper case); every method when absent. */
  readonly method?: string;
  /** Matched against the request's path (no query string). */
  readonly pattern: RegExp;
  /** Sunset date, ISO `YYYY-MM-DD`. */
  readonly sunset?: string;
  /** The successor's path or URL, from the match. */
  readonly successor: (match: RegExpExecArray) => string;
}

/**
 * Sets the deprecation headers on every answer of a deprecated route, refusals included: a
 * middleware runs before the guards (authentication, permissions, rate limits) and the
 * pipes, so a 400, 401, 403 or 429 tells the caller the route is going too. An interceptor,
 * which Nest runs after the guards, missed those.
 */
export function deprecatedRoutesMiddleware(routes: readonly DeprecatedRoute[]) {
  return (req: Request, res: Response, next: NextFunction): void => {
    for (const route of routes) {
      if (route.method !== undefined && route.method !== req.method) continue;
      const match = route.pattern.exec(req.path);
      if (!match) continue;
      setDeprecationHeaders(res, {
        ...(route.sunset === undefined ? {} : { sunset: route.sunset }),
        successor: route.successor(match),
      });
      break;
    }
    next();
  };
}
