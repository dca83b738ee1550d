import { createServer, type Server } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { ErrorCode, matchRoute, type ServiceName } from '@strata/contracts';
import { renderError, requestIdMiddleware, requestIdOf, setDeprecationHeaders } from '@strata/platform';
import type { GatewayConfig } from './gateway.config.js';
import { docsRouter } from './docs.js';

/** The upstream of every service, from configuration. */
export function upstreams(config: GatewayConfig): Record<ServiceName, string> {
  return {
    auth: config.AUTH_SERVICE_URL,
    data: config.DATA_SERVICE_URL,
    compute: config.COMPUTE_SERVICE_URL,
    orchestration: config.ORCHESTRATION_SERVICE_URL,
    webhooks: config.WEBHOOKS_SERVICE_URL,
    inbound: config.INBOUND_SERVICE_URL,
  };
}

const ROUTED = Symbol('strata:route');
type RoutedRequest = Request & { [ROUTED]?: { service: ServiceName; path: string; deprecated: boolean } };

/**
 * The public entry `{base_url}`: routes by the shared routing table, streams
 * bodies and headers through untouched (webhook signatures cover raw bodies),
 * adds a request id, answers unknown paths with a 404 in the general shape.
 */
export function createGateway(config: GatewayConfig): express.Express {
  const app = express();
  const targets = upstreams(config);
  const origins = config.CORS_ORIGINS.split(',').map((o) => o.trim());
  app.disable('x-powered-by');
  app.use(requestIdMiddleware);
  app.use(cors(origins));
  app.get('/healthz', (_req, res) => res.json({ status: 'ok' }));
  app.use('/docs', docsRouter(targets));

  app.use((req: RoutedRequest, res: Response, next: NextFunction) => {
    const match = matchRoute(req.path);
    if (!match) {
      res.status(404).json(
        renderError('general', {
          status: 404,
          code: ErrorCode.NOT_FOUND,
          message: `No route for ${req.method} ${req.path}`,
          requestId: requestIdOf(req),
        }),
      );
      return;
    }
    req[ROUTED] = { service: match.route.service, path: match.path, deprecated: match.deprecated };
    if (match.deprecated) {
      setDeprecationHeaders(res, { sunset: '2026-10-29', successor: match.path });
    }
    next();
  });

  const proxy = createProxyMiddleware<RoutedRequest, Response>({
    router: (req) => targets[req[ROUTED]!.service],
    pathRewrite: (path, req) => {
      const query = path.includes('?') ? path.slice(path.indexOf('?')) : '';
      return req[ROUTED]!.path + query;
    },
    changeOrigin: false,
    xfwd: true,
    proxyTimeout: 5 * 60_000,
    on: {
      error: (err, req, res) => {
        const out = res as Response;
        if (out.headersSent || typeof out.status !== 'function') return;
        const code = (err as NodeJS.ErrnoException).code;
        const status = code === 'ECONNREFUSED' || code === 'ENOTFOUND' ? 503 : 502;
        out.status(status).json(
          renderError('general', {
            status,
            code: status === 503 ? ErrorCode.UNAVAILABLE : ErrorCode.BAD_GATEWAY,
            message: `The ${req[ROUTED]?.service ?? 'upstream'} service is unavailable`,
            requestId: requestIdOf(req),
          }),
        );
      },
    },
  });
  app.use(proxy);
  return app;
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

export function listen(app: express.Express, port: number, host: string): Promise<Server> {
  const server = createServer(app);
  return new Promise((resolve) => server.listen(port, host, () => resolve(server)));
}
