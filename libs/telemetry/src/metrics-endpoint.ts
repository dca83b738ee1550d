import { createServer, type Server } from 'node:http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';

/**
 * Parses `METRICS_PORT`: a port (1-65535) serves Prometheus metrics, unset or
 * empty serves none. Anything else stops the service at start, as a bad
 * setting should, rather than leaving it silently unscraped.
 */
export function metricsPortOf(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const port = /^\d{1,5}$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`METRICS_PORT must be a port from 1 to 65535, not '${value}'`);
  }
  return port;
}

/**
 * A Prometheus reader of the service's metrics, answered at `GET /metrics` on
 * a server of its own (not the API's port: nothing there needs a token, and an
 * operator exposes it only inside the cluster). The server does not keep the
 * process alive: a one-off command (`main.js migrate`) with METRICS_PORT in its
 * environment still ends, and a port already taken is logged, not fatal.
 */
export function prometheusReader(
  port: number,
  host: string | undefined,
): { reader: PrometheusExporter; server: Server } {
  const reader = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true });
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method === 'GET' && path === '/metrics') {
      reader.getMetricsRequestHandler(request, response);
      return;
    }
    response.statusCode = 404;
    response.end('Not found: metrics are at GET /metrics\n');
  });
  server.on('error', (err) => {
    process.stderr.write(
      `${JSON.stringify({ level: 'warn', context: 'Telemetry', msg: 'metrics endpoint not served', port, err: String(err) })}\n`,
    );
  });
  server.listen(port, host);
  server.unref();
  return { reader, server };
}
