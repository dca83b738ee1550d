import { Logger } from '@nestjs/common';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { ErrorShape } from '@strata/contracts';
import { logFailure, toRenderable } from '../errors/error.filter.js';
import { renderError } from '../errors/render-error.js';
import { StrataException } from '../errors/strata.exception.js';
import { assignRequestId } from './request-id.middleware.js';
import { setRouteTemplate } from './route-template.js';

/**
 * What a direct route answers: a status, a JSON body and headers of its own;
 * or nothing, when the handler wrote its response itself (a body that is not JSON).
 */
export interface DirectAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * A route served straight from `node:http`, ahead of Express and Nest, for a
 * hot path whose handler checks its own input (no guard, pipe or interceptor
 * applies to it). It takes only the plainest form of its requests: the method
 * given, a path `pattern` matches (its groups are the parameters, so they must
 * allow only characters that need no decoding), and no `%` anywhere in the
 * URL. Any other request, including every odd form of the same path, goes to
 * the application's full stack, where the same handler is mounted as an
 * ordinary route: the direct route is a faster way to the same answer, never
 * the only way.
 */
export interface DirectRoute {
  /** The method it takes, or the methods (a handler that answers each, 405 included). */
  readonly method: string | readonly string[];
  readonly pattern: RegExp;
  /** The error body shape of the full route. */
  readonly errorShape: ErrorShape;
  /** The full route's template (`/data/workspace/:workspace/api/v1/http-trigger/:path`), for metrics. */
  readonly name: string;
  handle(req: IncomingMessage, res: ServerResponse, params: readonly string[]): Promise<DirectAnswer | void>;
}

const logger = new Logger('DirectRoutes');

/**
 * Puts `routes` in front of the server's request listener (the Express
 * application). Each request a route takes gets a request id, as every request
 * does, and its errors are answered and logged as the platform's error filter
 * answers and logs them.
 */
export function serveDirectRoutes(server: Server, routes: readonly DirectRoute[]): void {
  if (routes.length === 0) return;
  const fallbacks = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const found = matchRoute(routes, req.method, req.url);
    if (!found) {
      for (const listener of fallbacks) listener.call(server, req, res);
      return;
    }
    void answer(found.route, found.params, req, res);
  });
}

/** The route that takes a request, with its parameters; undefined for the full stack. */
export function matchRoute(
  routes: readonly DirectRoute[],
  method: string | undefined,
  url: string | undefined,
): { route: DirectRoute; params: string[] } | undefined {
  if (url === undefined || url.includes('%')) return undefined;
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  for (const route of routes) {
    if (typeof route.method === 'string' ? route.method !== method : !route.method.includes(method ?? '')) continue;
    const match = route.pattern.exec(path);
    if (match) return { route, params: match.slice(1) };
  }
  return undefined;
}

async function answer(route: DirectRoute, params: string[], req: IncomingMessage, res: ServerResponse): Promise<void> {
  setRouteTemplate(req, route.name);
  const requestId = assignRequestId(req, res);
  let reply: DirectAnswer | void;
  try {
    reply = await route.handle(req, res, params);
  } catch (thrown) {
    const error = toRenderable(thrown, requestId);
    logFailure(logger, thrown, error, { requestId, path: (req.url ?? '').split('?')[0]!, method: req.method });
    const headers = thrown instanceof StrataException && thrown.headers ? thrown.headers : {};
    reply = { status: error.status, body: renderError(route.errorShape, error), headers };
  }
  if (!reply || res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  const text = JSON.stringify(reply.body);
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  res.writeHead(reply.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
