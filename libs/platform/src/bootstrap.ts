import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Server } from 'node:http';
import type { RequestHandler } from 'express';
import type { ErrorShape } from '@strata/contracts';
import { JsonLogger, requestMetrics } from '@strata/telemetry';
import { ErrorFilter } from './errors/error.filter.js';
import { bodyParsing } from './http/body-parsing.js';
import { deprecatedRoutesMiddleware, type DeprecatedRoute } from './http/deprecated-routes.js';
import { serveDirectRoutes, type DirectRoute } from './http/direct-routes.js';
import { routeTemplateOf } from './http/route-template.js';
import { closeConnectionsWhenAnswered } from './http/graceful-close.js';
import { requestIdMiddleware } from './http/request-id.middleware.js';
import { urlCheckMiddleware } from './http/url-check.middleware.js';
import { serveOpenApi } from './openapi/openapi.js';
import { createValidationPipe } from './validation/validation.pipe.js';
import { NoBodyInterceptor } from './validation/no-body.interceptor.js';
import type { ServiceConfig } from './config/service-config.js';

export interface ServiceAppOptions {
  readonly name: string;
  readonly config: ServiceConfig;
  readonly description: string;
  /** Error shape for requests that fail before a handler is chosen (unknown path, bad JSON). */
  readonly defaultErrorShape?: (path: string) => ErrorShape;
  /**
   * Paths a mounted handler serves with its own parsing and input checks
   * (oidc-provider): the platform's URL checks and body parsing skip them.
   */
  readonly skipBodyParsing?: RegExp;
  /**
   * Paths whose handlers read the raw body themselves (endpoint triggers sign
   * and pass on the bytes as sent): body parsing skips them, URL checks do not.
   */
  readonly rawBodyPaths?: RegExp;
  /** Paths whose routes take an HTML form (`application/x-www-form-urlencoded`); every other body must be JSON. */
  readonly formPaths?: RegExp;
  /** Largest body accepted. */
  readonly jsonLimit?: string;
  /** Hook to mount things (such as the OIDC provider) before Nest's routes. */
  readonly beforeInit?: (app: NestExpressApplication) => void | Promise<void>;
  /** Deprecated variants of routes: every answer of theirs, refusals too, carries the deprecation headers. */
  readonly deprecatedRoutes?: readonly DeprecatedRoute[];
  /** Hot paths served ahead of Express and Nest (`DirectRoute`), built once the application's providers exist. */
  readonly directRoutes?: (app: NestExpressApplication) => readonly DirectRoute[];
}

/** Creates a service's Nest application with the platform's filter, pipe, request ids, logs and OpenAPI. */
export async function createServiceApp(module: unknown, options: ServiceAppOptions): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(module as never, {
    logger: new JsonLogger(options.name, options.config.LOG_LEVEL),
    bodyParser: false,
  });
  app.disable('x-powered-by');
  // Express would hash every response body for a weak ETag; no client of the API
  // revalidates with If-None-Match (record versions use If-Match on the version).
  app.set('etag', false);
  app.set('trust proxy', 'loopback, linklocal, uniquelocal');
  keepConnectionsAlive(app.getHttpServer(), options.config.HTTP_KEEP_ALIVE_TIMEOUT_MS);
  app.use(requestIdMiddleware);
  if (options.deprecatedRoutes?.length) app.use(deprecatedRoutesMiddleware(options.deprecatedRoutes));
  const skip = options.skipBodyParsing;
  app.use(unless(skip, urlCheckMiddleware));
  const parse = bodyParsing({ limit: options.jsonLimit ?? '1mb', formPaths: options.formPaths });
  app.use(unless(skip, unless(options.rawBodyPaths, parse)));
  await options.beforeInit?.(app);
  app.useGlobalFilters(new ErrorFilter(options.defaultErrorShape));
  app.useGlobalPipes(createValidationPipe());
  app.useGlobalInterceptors(new NoBodyInterceptor());
  app.enableShutdownHooks();
  // Before init: routes added after it sit behind Nest's 404 handler.
  serveOpenApi(app, `Strata ${options.name}`, options.description);
  await app.init();
  if (options.directRoutes) serveDirectRoutes(app.getHttpServer(), options.directRoutes(app));
  // Ahead of every other listener, the direct routes' too: every request is counted, with the
  // route that took it read once it is answered.
  app.getHttpServer().prependListener('request', requestMetrics(options.name, routeTemplateOf));
  // Last: it must see every request, those of the direct routes too.
  closeConnectionsWhenAnswered(app.getHttpServer());
  return app;
}

/**
 * How long an idle client connection stays open. Longer than the gateway's
 * idle upstream sockets (it drops its own first, so it never sends a request
 * on a socket this server is closing); the headers timeout must outlast it.
 */
export function keepConnectionsAlive(server: Server, keepAliveTimeoutMs: number): void {
  server.keepAliveTimeout = keepAliveTimeoutMs;
  server.headersTimeout = Math.max(server.headersTimeout, keepAliveTimeoutMs + 1000);
}

function unless(skip: RegExp | undefined, handler: RequestHandler): RequestHandler {
  if (!skip) return handler;
  return (req, res, next) => (skip.test(req.path) ? next() : handler(req, res, next));
}
