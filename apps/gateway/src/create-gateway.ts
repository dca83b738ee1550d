import { createServer, STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { LoggerService } from '@nestjs/common';
import express, { type NextFunction, type Request, type Response } from 'express';
import { ErrorCode, matchRoute, type ServiceName } from '@strata/contracts';
import {
  keepConnectionsAlive,
  renderError,
  requestIdMiddleware,
  requestIdOf,
  setDeprecationHeaders,
} from '@strata/platform';
import { JsonLogger, requestMetrics } from '@strata/telemetry';
import type { GatewayConfig } from './gateway.config.js';
import { docsRouter } from './docs.js';
import { upstreamProxy, type Routed } from './upstream-proxy.js';

/** The upstream of every service, from configuration. */
export function upstreams(config: GatewayConfig): Record<ServiceName, string> {
  return {
    auth: config.AUTH_SERVICE_URL,
    data: config.DATA_SERVICE_URL,
    compute: config.COMPUTE_SERVICE_URL,
    'compute-worker': config.COMPUTE_WORKER_SERVICE_URL,
    orchestration: config.ORCHESTRATION_SERVICE_URL,
    webhooks: config.WEBHOOKS_SERVICE_URL,
    inbound: config.INBOUND_SERVICE_URL,
  };
}

const ROUTED = Symbol('strata:route');
type RoutedRequest = Request & { [ROUTED]?: Routed };

/**
 * The public entry `{base_url}`: routes by the shared routing table, streams
 * bodies and headers through untouched (webhook signatures cover raw bodies),
 * adds a request id, answers unknown paths with a 404 in the general shape.
 */
export function createGateway(
  config: GatewayConfig,
  logger: LoggerService = new JsonLogger('gateway', config.LOG_LEVEL),
): express.Express {
  const app = express();
  const targets = upstreams(config);
  /** `{auth_url}`: the token issuer without its `/oidc`. */
  const authUrl = config.AUTH_ISSUER.replace(/\/oidc\/?$/, '');
  const origins = config.CORS_ORIGINS.split(',').map((o) => o.trim());
  app.disable('x-powered-by');
  app.use(requestIdMiddleware);
  // By the service a request was routed to (the routing table's services are the gateway's routes).
  app.use(requestMetrics('gateway', (req: RoutedRequest) => req[ROUTED]?.service));
  app.use(cors(origins));
  app.get('/healthz', (_req, res) => res.json({ status: 'ok' }));
  const endpointsHost = config.GATEWAY_ENDPOINTS_HOST;
  // The endpoints' own host serves endpoint calls and nothing else: no /docs, no API beside them.
  if (endpointsHost !== undefined) app.use(onlyEndpointsOn(endpointsHost));
  app.use('/docs', docsRouter(targets));

  app.use((req: RoutedRequest, res: Response, next: NextFunction) => {
    const match = matchRoute(req.path);
    if (!match) {
      notFound(req, res, `No route for ${req.method} ${req.path}`);
      return;
    }
    if (endpointsHost !== undefined && match.route.service === ENDPOINTS_SERVICE && hostOf(req) !== endpointsHost) {
      // In the endpoints' own error shape, as the worker answers an unknown endpoint.
      notFound(req, res, `Endpoint calls are served on the host ${endpointsHost}, not on this one.`, 'functions');
      return;
    }
    req[ROUTED] = { service: match.route.service, path: match.path };
    if (match.deprecated) {
      // An IAM path's successor lives on {auth_url}, where the relative path would not resolve.
      const successor = match.route.service === 'auth' ? `${authUrl}${match.path}` : match.path;
      setDeprecationHeaders(res, { sunset: '2026-10-29', successor });
    }
    next();
  });

  app.use(
    upstreamProxy({
      targets,
      routeOf: (req: RoutedRequest) => req[ROUTED],
      idleTimeoutMs: config.GATEWAY_UPSTREAM_IDLE_TIMEOUT_MS,
      logger,
    }),
  );
  app.use(errorHandler(logger));
  return app;
}

/** The service of the routing table that answers endpoint calls. */
const ENDPOINTS_SERVICE: ServiceName = 'compute-worker';

function notFound(req: Request, res: Response, message: string, shape: 'general' | 'functions' = 'general'): void {
  res
    .status(404)
    .json(renderError(shape, { status: 404, code: ErrorCode.NOT_FOUND, message, requestId: requestIdOf(req) }));
}

/** The host a request names (its `Host`, lower case, without the port). */
function hostOf(req: Request): string | undefined {
  const host = req.headers.host;
  if (host === undefined) return undefined;
  try {
    return new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * On the endpoints' own host only endpoint calls are routed: an endpoint's
 * page, served from there, shares its origin with other endpoints only, never
 * with the API or its documentation.
 */
function onlyEndpointsOn(endpointsHost: string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (hostOf(req) !== endpointsHost || matchRoute(req.path)?.route.service === ENDPOINTS_SERVICE) {
      next();
      return;
    }
    notFound(req, res, `No route for ${req.method} ${req.path} on the endpoints host.`);
  };
}

/**
 * Errors of the gateway's own routes, in the general shape: a client error
 * raised by Express (a path it cannot decode) keeps its 4xx; anything else is a
 * 500 carrying the request id, logged.
 */
function errorHandler(logger: LoggerService) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const requestId = requestIdOf(req);
    const status = (err as { status?: unknown } | undefined)?.status;
    const clientError = err instanceof URIError && status === 400;
    if (!clientError) {
      logger.error({
        msg: 'request failed',
        requestId,
        method: req.method,
        path: req.path,
        err: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
      });
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const error = clientError
      ? {
          status: 400,
          code: ErrorCode.VALIDATION_ERROR,
          message: 'Invalid request URL',
          details: [{ field: 'path', message: 'is not valid percent-encoded UTF-8' }],
        }
      : {
          status: 500,
          code: ErrorCode.INTERNAL,
          message: `Internal server error${requestId ? ` (request id ${requestId})` : ''}`,
        };
    res.status(error.status).json(renderError('general', { ...error, requestId }));
  };
}

function cors(origins: string[]) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const origin = req.headers.origin;
    if (origin && (origins.includes('*') || origins.includes(origin))) {
      res.setHeader('Access-Control-Allow-Origin', origins.includes('*') ? '*' : origin);
      res.setHeader('Vary', 'Origin');
      res.setHeader(
        'Access-Control-Expose-Headers',
        'x-request-id, x-ratelimit-limit, x-ratelimit-remaining, retry-after, deprecation, sunset, link',
      );
      if (req.method === 'OPTIONS') {
        res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS');
        res.setHeader(
          'Access-Control-Allow-Headers',
          req.headers['access-control-request-headers'] ?? 'authorization, content-type',
        );
        res.setHeader('Access-Control-Max-Age', '600');
        res.status(204).end();
        return;
      }
    }
    next();
  };
}

/**
 * A request Node's parser refuses before any route sees it (a URL and headers
 * over its 16 KiB, a malformed request line) is answered in the general error
 * shape like every other error, instead of Node's bare status line.
 */
export function answerParserErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // As Node does: answer only when no response on this connection has started (a pipelined one
    // would be corrupted), and never a reset connection.
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, code, message } = parserRefusal(err.code);
    const body = JSON.stringify(renderError('general', { status, code, message }));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

/** Node's own statuses for what its parser refuses, with a message of ours. */
function parserRefusal(code: string | undefined): { status: number; code: ErrorCode; message: string } {
  switch (code ?? '') {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        code: ErrorCode.VALIDATION_ERROR,
        message: 'The request line and headers together are larger than 16 KiB.',
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, code: ErrorCode.PAYLOAD_TOO_LARGE, message: 'The chunk extensions are too large.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: ErrorCode.TIMEOUT, message: 'The request did not arrive in time.' };
    default:
      return { status: 400, code: ErrorCode.VALIDATION_ERROR, message: 'The request could not be parsed as HTTP/1.1.' };
  }
}

export function listen(app: express.Express, port: number, host: string, keepAliveTimeoutMs?: number): Promise<Server> {
  const server = createServer(app);
  answerParserErrors(server);
  if (keepAliveTimeoutMs !== undefined) keepConnectionsAlive(server, keepAliveTimeoutMs);
  // A port in use (EADDRINUSE) rejects: the gateway exits with the reason instead of waiting forever.
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
