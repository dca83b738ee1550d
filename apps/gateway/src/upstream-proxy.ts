import { Agent, request, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { LoggerService } from '@nestjs/common';
import { ErrorCode, type ServiceName } from '@strata/contracts';
import { hasBody, renderError, requestIdOf } from '@strata/platform';
import { sendJson } from './answers.js';
import { forwardedHeaders, responseHeaders } from './proxy-headers.js';

/** Where a routed request goes: its service and the path that service receives. */
export interface Routed {
  readonly service: ServiceName;
  readonly path: string;
}

export interface UpstreamProxyOptions {
  readonly targets: Record<ServiceName, string>;
  /** Idle upstream sockets are closed after this (or 1 s before the upstream's announced keep-alive, if sooner). */
  readonly idleTimeoutMs: number;
  readonly logger: LoggerService;
}

/** Streams a routed request to its service and its answer back. */
export type UpstreamProxy = (req: IncomingMessage, res: ServerResponse, route: Routed) => void;

/** Methods a proxy may send twice: they change nothing (RFC 9110, 9.2.1). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** An upstream that has not answered in this long is given up on (a 502). */
const UPSTREAM_TIMEOUT_MS = 5 * 60_000;

interface Target {
  readonly hostname: string;
  readonly port: number;
  /** The target URL's own path, put before every routed path ('' for none). */
  readonly base: string;
}

function targetOf(url: string): Target {
  const u = new URL(url);
  const base = u.pathname === '/' ? '' : u.pathname.replace(/\/$/, '');
  return { hostname: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port || 80), base };
}

/**
 * The keep-alive agent for the services. It needs a `timeout`: Node lets an
 * agent shorten its idle timeout to 1 s before the `Keep-Alive: timeout=N` a
 * server announces only when the agent has a timeout of its own. Without one
 * an idle socket is kept until the server closes it, and a request sent as the
 * server closes it fails with ECONNRESET: a 502.
 */
export function upstreamAgent(idleTimeoutMs: number): Agent {
  return new Agent({ keepAlive: true, timeout: idleTimeoutMs, maxSockets: 256, maxFreeSockets: 64 });
}

/**
 * Streams a routed request to its service with `http.request` over one
 * keep-alive agent: headers and body go through untouched (plus
 * X-Forwarded-*), and the answer is piped back as the service sent it. An
 * upstream failure is logged with the request id (method, service and path;
 * never headers, query or body) and answered 503 (service not reachable) or
 * 502. A safe request without a body that failed on a reused keep-alive socket
 * before any response is sent once more on a new socket; nothing else is
 * retried (its body is already streamed, and the service may have acted on it).
 */
export function upstreamProxy(options: UpstreamProxyOptions): UpstreamProxy {
  const { logger } = options;
  const agent = upstreamAgent(options.idleTimeoutMs);
  const targets = new Map<ServiceName, Target>(
    Object.entries(options.targets).map(([service, url]) => [service as ServiceName, targetOf(url)]),
  );

  const forward = (req: IncomingMessage, res: ServerResponse, route: Routed, retried: boolean): void => {
    const target = targets.get(route.service)!;
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const upstream: ClientRequest = request({
      agent,
      hostname: target.hostname,
      port: target.port,
      method: req.method,
      path: target.base + route.path + (query === -1 ? '' : url.slice(query)),
      headers: forwardedHeaders(req),
    });
    upstream.setTimeout(UPSTREAM_TIMEOUT_MS, () => upstream.destroy());
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });

    const failed = (err: NodeJS.ErrnoException): void => {
      // The client went away: nobody to answer.
      if (!req.socket.writable && err.code === 'ECONNRESET') {
        upstream.destroy();
        return;
      }
      const reused = upstream.reusedSocket;
      const retry =
        reused &&
        !retried &&
        (err.code === 'ECONNRESET' || err.code === 'EPIPE') &&
        SAFE_METHODS.has(req.method ?? '') &&
        !hasBody(req) &&
        !res.headersSent;
      logger.warn({
        msg: retry ? 'upstream request failed on a reused socket; retrying once' : 'upstream request failed',
        requestId: requestIdOf(req),
        service: route.service,
        method: req.method,
        path: route.path,
        code: err.code,
        error: err.message,
        reusedSocket: reused,
      });
      if (retry) forward(req, res, route, true);
      else answerUnavailable(req, res, err.code, route);
    };
    upstream.on('error', failed);
    if (!retried) req.on('error', failed);

    upstream.on('response', (answer) => {
      // An answer before the whole body was sent (a 413, a 401): the rest of the body is dropped.
      if (!upstream.writableFinished) {
        answer.once('end', () => {
          if (upstream.writableFinished) return;
          req.unpipe(upstream);
          req.resume();
        });
        answer.once('close', () => {
          if (upstream.writableFinished) return;
          req.unpipe(upstream);
          req.resume();
          upstream.destroy();
        });
      }
      if (!res.headersSent) {
        responseHeaders(req, answer, res);
        res.statusCode = answer.statusCode ?? 502;
        if (answer.statusMessage) res.statusMessage = answer.statusMessage;
      }
      res.on('close', () => answer.destroy());
      answer.on('close', () => {
        if (!answer.complete && !res.destroyed) res.destroy();
      });
      answer.on('error', failed);
      answer.pipe(res);
    });

    if (retried || !hasBody(req)) upstream.end();
    else req.pipe(upstream);
  };

  return (req, res, route) => forward(req, res, route, false);
}

/**
 * No sandbox worker reachable is the spec's 503 for an endpoint call ("no
 * compute worker free: the request is not queued"), answered as the compute
 * API answers it when no worker takes its dispatch.
 */
const NO_WORKER_MESSAGE =
  'No compute worker is free to run this endpoint; the request was not queued. Try again shortly.';

function answerUnavailable(req: IncomingMessage, res: ServerResponse, code: string | undefined, route: Routed): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.destroy();
    return;
  }
  const status = code === 'ECONNREFUSED' || code === 'ENOTFOUND' ? 503 : 502;
  const requestId = requestIdOf(req);
  if (status === 503 && route.service === 'compute-worker') {
    res.setHeader('Retry-After', '1');
    sendJson(
      req,
      res,
      503,
      renderError('functions', { status, code: ErrorCode.UNAVAILABLE, message: NO_WORKER_MESSAGE, requestId }),
    );
    return;
  }
  sendJson(
    req,
    res,
    status,
    renderError('general', {
      status,
      code: status === 503 ? ErrorCode.UNAVAILABLE : ErrorCode.BAD_GATEWAY,
      message: `The ${route.service} service is unavailable`,
      requestId,
    }),
  );
}
