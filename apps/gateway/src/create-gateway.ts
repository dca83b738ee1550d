import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { LoggerService } from '@nestjs/common';
import { ErrorCode, matchRoute, type ServiceName } from '@strata/contracts';
import { assignRequestId, keepConnectionsAlive, renderError, setDeprecationHeaders } from '@strata/platform';
import { JsonLogger, requestMetrics } from '@strata/telemetry';
import type { GatewayConfig } from './gateway.config.js';
import { notFound, pathOf, sendJson } from './answers.js';
import { applyCors } from './cors.js';
import { docsApp } from './docs-app.js';
import { answerParserErrors } from './parser-errors.js';
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
    storage: config.STORAGE_SERVICE_URL,
  };
}

const ROUTED = Symbol('strata:route');
type RoutedRequest = IncomingMessage & { [ROUTED]?: Routed };

/** The service of the routing table that answers endpoint calls. */
const ENDPOINTS_SERVICE: ServiceName = 'compute-worker';
/** `/healthz`, as Express matched it (any case, an optional trailing slash). */
const HEALTHZ = /^\/healthz\/?$/i;
/** `/docs` and below, as Express mounted its router (any case). */
const DOCS = /^\/docs(?:\/|$)/i;

/**
 * The public entry `{base_url}`: a plain `node:http` request handler (no
 * per-request middleware chain) that gives each request its id, records its
 * metrics, answers CORS, routes it by the shared routing table and streams it
 * to its service untouched (webhook signatures cover raw bodies). `/docs` is
 * served by a small Express app; unknown paths get a 404 in the general shape.
 */
export function createGateway(
  config: GatewayConfig,
  logger: LoggerService = new JsonLogger('gateway', config.LOG_LEVEL),
): RequestListener {
  const targets = upstreams(config);
  /** `{auth_url}`: the token issuer without its `/oidc`. */
  const authUrl = config.AUTH_ISSUER.replace(/\/oidc\/?$/, '');
  const origins = config.CORS_ORIGINS.split(',').map((o) => o.trim());
  const endpointsHost = config.GATEWAY_ENDPOINTS_HOST;
  // By the service a request was routed to (the routing table's services are the gateway's routes).
  const metrics = requestMetrics('gateway', (req: RoutedRequest) => req[ROUTED]?.service);
  const docs = docsApp(targets, logger);
  const proxy = upstreamProxy({ targets, idleTimeoutMs: config.GATEWAY_UPSTREAM_IDLE_TIMEOUT_MS, logger });

  const handle = (req: RoutedRequest, res: ServerResponse): void => {
    if (applyCors(origins, req, res)) return;
    const path = pathOf(req.url);
    if (HEALTHZ.test(path) && (req.method === 'GET' || req.method === 'HEAD')) {
      sendJson(req, res, 200, { status: 'ok' });
      return;
    }
    const match = matchRoute(path);
    const endpointCall = match?.route.service === ENDPOINTS_SERVICE;
    // The endpoints' own host serves endpoint calls and nothing else: no /docs, no API beside them.
    if (endpointsHost !== undefined && !endpointCall && hostOf(req) === endpointsHost) {
      notFound(req, res, `No route for ${req.method} ${path} on the endpoints host.`);
      return;
    }
    if (DOCS.test(path)) {
      docs(req, res);
      return;
    }
    if (!match) {
      notFound(req, res, `No route for ${req.method} ${path}`);
      return;
    }
    if (endpointsHost !== undefined && endpointCall && hostOf(req) !== endpointsHost) {
      // In the endpoints' own error shape, as the worker answers an unknown endpoint.
      notFound(req, res, `Endpoint calls are served on the host ${endpointsHost}, not on this one.`, 'functions');
      return;
    }
    const route: Routed = { service: match.route.service, path: match.path };
    req[ROUTED] = route;
    if (match.deprecated) {
      // An IAM path's successor lives on {auth_url}, where the relative path would not resolve.
      const successor = match.route.service === 'auth' ? `${authUrl}${match.path}` : match.path;
      setDeprecationHeaders(res, { sunset: '2026-10-29', successor });
    }
    proxy(req, res, route);
  };

  return (req: RoutedRequest, res: ServerResponse): void => {
    const requestId = assignRequestId(req, res);
    metrics(req, res);
    try {
      handle(req, res);
    } catch (err) {
      failed(logger, req, res, requestId, err);
    }
  };
}

/** A failure of the gateway's own: logged with the request id, answered 500 in the general shape. */
function failed(
  logger: LoggerService,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  err: unknown,
): void {
  logger.error({
    msg: 'request failed',
    requestId,
    method: req.method,
    path: pathOf(req.url),
    err: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
  });
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = renderError('general', {
    status: 500,
    code: ErrorCode.INTERNAL,
    message: `Internal server error (request id ${requestId})`,
    requestId,
  });
  sendJson(req, res, 500, body);
}

/** The host a request names (its `Host`, lower case, without the port). */
function hostOf(req: IncomingMessage): string | undefined {
  const host = req.headers.host;
  if (host === undefined) return undefined;
  try {
    return new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

export function listen(app: RequestListener, port: number, host: string, keepAliveTimeoutMs?: number): Promise<Server> {
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
