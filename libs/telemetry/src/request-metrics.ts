import type { IncomingMessage, ServerResponse } from 'node:http';
import { metrics } from '@opentelemetry/api';

/** The route a request took, as a template (`/data/workspace/:workspace/api/v1/records/:recordId`), never its path. */
export type RouteOf<Req extends IncomingMessage> = (req: Req) => string | undefined;

/** Requests no route took (a 404 of the router, a body refused before routing). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Counts and times every request a service answers (`strata.http.request.duration_seconds`,
 * a histogram whose count is the request rate): the rate, errors and latency an SRE watches per
 * service and route. Attributes are bounded: the service, the method, the route template (not
 * the path, which carries ids and workspaces) and the status. OpenTelemetry records nothing
 * unless the process collects metrics (METRICS_PORT, or an OTLP collector).
 */
export function requestMetrics<Req extends IncomingMessage>(service: string, routeOf: RouteOf<Req>) {
  const duration = metrics.getMeter('strata-http').createHistogram('strata.http.request.duration_seconds', {
    description: 'Requests answered, from their arrival to the end of the answer, by service, method, route and status',
    unit: 's',
    advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] },
  });
  return (req: Req, res: ServerResponse, next?: () => void): void => {
    const started = process.hrtime.bigint();
    // `close` comes after `finish`, and also when the client went away before the answer ended.
    res.once('close', () => {
      duration.record(Number(process.hrtime.bigint() - started) / 1e9, {
        service,
        method: req.method ?? 'UNKNOWN',
        route: routeOf(req) ?? UNMATCHED_ROUTE,
        // A client that went away before the answer ended: the status set so far is not what it got.
        status: res.writableFinished ? String(res.statusCode) : 'aborted',
      });
    });
    next?.();
  };
}
