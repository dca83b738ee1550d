import type { LoggerService } from '@nestjs/common';
import express, { type NextFunction, type Request, type Response } from 'express';
import { ErrorCode, type ServiceName } from '@strata/contracts';
import { renderError, requestIdOf } from '@strata/platform';
import { notFound } from './answers.js';
import { docsRouter } from './docs.js';

/**
 * `{base_url}/docs` and everything under it, the gateway's only Express app
 * (its routes are not on the proxied hot path). A path the documentation does
 * not serve is the gateway's 404, as on any unknown path.
 */
export function docsApp(targets: Record<ServiceName, string>, logger: LoggerService): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.use('/docs', docsRouter(targets));
  app.use((req: Request, res: Response) => notFound(req, res, `No route for ${req.method} ${req.path}`));
  app.use(errorHandler(logger));
  return app;
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
