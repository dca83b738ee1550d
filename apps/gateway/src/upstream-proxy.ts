import { Agent, type ClientRequest } from 'node:http';
import type { LoggerService } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { ErrorCode, type ServiceName } from '@strata/contracts';
import { hasBody, renderError, requestIdOf } from '@strata/platform';

/** Where a routed request goes: its service and the path that service receives. */
export interface Routed {
  readonly service: ServiceName;
  readonly path: string;
}

export interface UpstreamProxyOptions {
  readonly targets: Record<ServiceName, string>;
  /** The routing decision made for a request (undefined: not routed). */
  readonly routeOf: (req: Request) => Routed | undefined;
  /** Idle upstream sockets are closed after this (or 1 s before the upstream's announced keep-alive, if sooner). */
  readonly idleTimeoutMs: number;
  readonly logger: LoggerService;
}

const UPSTREAM_REQUEST = Symbol('strata:upstream-request');
const RETRIED = Symbol('strata:retried');
const FORWARDED = Symbol('strata:x-forwarded');
type ProxiedRequest = Request & {
  [UPSTREAM_REQUEST]?: ClientRequest;
  [RETRIED]?: boolean;
  /** The caller's own X-Forwarded-* headers, before the proxy appended to them. */
  [FORWARDED]?: Record<string, string | string[] | undefined>;
};

const X_FORWARDED = ['x-forwarded-for', 'x-forwarded-port', 'x-forwarded-proto', 'x-forwarded-host'];

/** Methods a proxy may send twice: they change nothing (RFC 9110, 9.2.1). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The keep-alive agent for the services. It needs a `timeout`: Node lets an
 * agent shorten its idle timeout to 1 s before the `Keep-Alive: timeout=N` a
 * server announces only when the agent has a timeout of its own. Without one
 * (httpxy's default agent) an idle socket is kept until the server closes it,
 * and a request sent as the server closes it fails with ECONNRESET: a 502.
 */
export function upstreamAgent(idleTimeoutMs: number): Agent {
  return new Agent({ keepAlive: true, timeout: idleTimeoutMs, maxSockets: 256, maxFreeSockets: 64 });
}

/**
 * Streams a routed request to its service. An upstream failure is logged with
 * the request id (method, service and path; never headers, query or body) and
 * answered 503 (service not reachable) or 502. A safe request without a body
 * that failed on a reused keep-alive socket before any response is sent once
 * more on a new socket; nothing else is retried (its body is already streamed,
 * and the service may have acted on it).
 */
export function upstreamProxy(options: UpstreamProxyOptions): RequestHandler {
  const { targets, routeOf, logger } = options;
  const agent = upstreamAgent(options.idleTimeoutMs);
  /** Errors the handler below has answered: HPM passes them on to `next` as well. */
  const answered = new WeakSet<object>();
  const proxy = createProxyMiddleware<ProxiedRequest, Response>({
    router: (req) => targets[routeOf(req)!.service],
    pathRewrite: (path, req) => {
      const query = path.includes('?') ? path.slice(path.indexOf('?')) : '';
      return routeOf(req)!.path + query;
    },
    agent,
    changeOrigin: false,
    xfwd: true,
    proxyTimeout: 5 * 60_000,
    on: {
      proxyReq: (proxyReq, req) => {
        req[UPSTREAM_REQUEST] = proxyReq;
      },
      error: (err, req, res) => {
        answered.add(err);
        const out = res as Response;
        const code = (err as NodeJS.ErrnoException).code;
        const route = routeOf(req);
        const reused = req[UPSTREAM_REQUEST]?.reusedSocket === true;
        const retry =
          reused &&
          !req[RETRIED] &&
          (code === 'ECONNRESET' || code === 'EPIPE') &&
          SAFE_METHODS.has(req.method) &&
          !hasBody(req) &&
          !out.headersSent;
        logger.warn({
          msg: retry ? 'upstream request failed on a reused socket; retrying once' : 'upstream request failed',
          requestId: requestIdOf(req),
          service: route?.service,
          method: req.method,
          path: route?.path,
          code,
          error: err.message,
          reusedSocket: reused,
        });
        if (retry) {
          req[RETRIED] = true;
          for (const name of X_FORWARDED) {
            const original = req[FORWARDED]?.[name];
            if (original === undefined) delete req.headers[name];
            else req.headers[name] = original;
          }
          void forward(req, out, () => answerUnavailable(req, out, code, route));
          return;
        }
        answerUnavailable(req, out, code, route);
      },
    },
  });
  // An error the handler above answered must not reach Express's final
  // handler too, which would destroy the socket of the sent response.
  const forward = (req: ProxiedRequest, res: Response, next: NextFunction): Promise<void> =>
    proxy(req, res, (err?: unknown) => {
      if (err !== null && typeof err === 'object' && answered.has(err)) return;
      next(err);
    });
  return (req: ProxiedRequest, res, next) => {
    req[FORWARDED] = Object.fromEntries(X_FORWARDED.map((name) => [name, req.headers[name]]));
    void forward(req, res, next);
  };
}

/**
 * No sandbox worker reachable is the spec's 503 for an endpoint call ("no
 * compute worker free: the request is not queued"), answered as the compute
 * API answers it when no worker takes its dispatch.
 */
const NO_WORKER_MESSAGE =
  'No compute worker is free to run this endpoint; the request was not queued. Try again shortly.';

function answerUnavailable(req: Request, res: Response, code: string | undefined, route: Routed | undefined): void {
  if (res.headersSent || typeof res.status !== 'function') {
    if (!res.writableEnded) res.destroy();
    return;
  }
  const status = code === 'ECONNREFUSED' || code === 'ENOTFOUND' ? 503 : 502;
  if (status === 503 && route?.service === 'compute-worker') {
    res.setHeader('Retry-After', '1');
    res.status(503).json(
      renderError('functions', {
        status,
        code: ErrorCode.UNAVAILABLE,
        message: NO_WORKER_MESSAGE,
        requestId: requestIdOf(req),
      }),
    );
    return;
  }
  res.status(status).json(
    renderError('general', {
      status,
      code: status === 503 ? ErrorCode.UNAVAILABLE : ErrorCode.BAD_GATEWAY,
      message: `The ${route?.service ?? 'upstream'} service is unavailable`,
      requestId: requestIdOf(req),
    }),
  );
}
