import type { DirectRoute } from '@strata/platform';
import { EndpointCalls } from './endpoint-calls.service.js';

/** `/data/workspace/{workspace}/api/v1/endpoints/{path}`, only characters that need no decoding. */
const ENDPOINT_PATH = /^\/data\/workspace\/([A-Za-z0-9_-]+)\/api\/v1\/endpoints\/([A-Za-z0-9_-]+)$/;

/** Every method a call may come with: the endpoint's allowedMethods are served, any other answered 405. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/**
 * Endpoint calls as a direct route (served from `node:http`, ahead of Express
 * and Nest: 0.3-0.5 ms of a call that is about 2 ms in all). It answers
 * exactly what EndpointsController answers, with the same service; a request
 * in another form (a percent sign anywhere, a trailing slash) goes to that
 * controller.
 */
export function endpointRoutes(calls: EndpointCalls): DirectRoute[] {
  return [
    {
      method: METHODS,
      pattern: ENDPOINT_PATH,
      errorShape: 'functions',
      name: '/data/workspace/:workspace/api/v1/endpoints/:path',
      async handle(req, res, [workspace, path]) {
        await calls.call(req as typeof req & { method: string }, res, workspace!, path!);
      },
    },
  ];
}
