import { register } from 'node:module';
import type { Server } from 'node:http';
import { metrics } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { MeterProvider, PeriodicExportingMetricReader, type IMetricReader } from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { metricsPortOf, prometheusReader } from './metrics-endpoint.js';

export interface TelemetryOptions {
  readonly serviceName: string;
  /**
   * OTLP/HTTP endpoint for traces and metrics. When absent (and no span
   * processor is given), telemetry is off: nothing is instrumented, no span is
   * created and logs carry no trace ids, because nothing would read them.
   */
  readonly otlpEndpoint?: string | undefined;
  /** Extra processors, for tests that collect spans in memory. */
  readonly spanProcessors?: SpanProcessor[];
  /**
   * `METRICS_PORT`: where Prometheus scrapes the service's metrics (`GET
   * /metrics`); unset, none are served. Independent of the OTLP endpoint: the
   * metrics alone instrument nothing, so requests cost nothing more.
   */
  readonly metricsPort?: string | undefined;
  /** The interface the metrics endpoint listens on (the service's `HOST`); all of them when absent. */
  readonly metricsHost?: string | undefined;
}

/** A service's telemetry as its environment sets it: OTEL_EXPORTER_OTLP_ENDPOINT, METRICS_PORT, HOST. */
export function telemetryFromEnv(serviceName: string, env: NodeJS.ProcessEnv = process.env): TelemetryOptions {
  return {
    serviceName,
    otlpEndpoint: env['OTEL_EXPORTER_OTLP_ENDPOINT'],
    metricsPort: env['METRICS_PORT'],
    metricsHost: env['HOST'],
  };
}

let sdk: NodeSDK | undefined;
let meterProvider: MeterProvider | undefined;
let metricsServer: Server | undefined;

/**
 * Starts OpenTelemetry. Call it before anything imports express, http or pg:
 * every `main.ts` awaits it first and then loads the application with a dynamic
 * `import()`, because ES modules are only patched when they load after the
 * instrumentation hook is registered.
 */
export function startTelemetry(options: TelemetryOptions): void {
  if (sdk || meterProvider) return;
  const metricReaders: IMetricReader[] = [];
  const port = metricsPortOf(options.metricsPort);
  if (port !== undefined) {
    const prometheus = prometheusReader(port, options.metricsHost);
    metricReaders.push(prometheus.reader);
    metricsServer = prometheus.server;
  }
  // Instrumentation costs every request (about 0.15 ms of CPU per record create in the data
  // service, docs/performance.md): it is paid only when someone collects what it produces.
  if (!options.otlpEndpoint && !options.spanProcessors?.length) {
    // Metrics only: the platform's own instruments (docs/runbooks.md, "Metrics"), nothing instrumented.
    if (metricReaders.length > 0) {
      meterProvider = new MeterProvider({
        resource: resourceFromAttributes({ 'service.name': options.serviceName }),
        readers: metricReaders,
      });
      metrics.setGlobalMeterProvider(meterProvider);
    }
    return;
  }
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const processors: SpanProcessor[] = [...(options.spanProcessors ?? [])];
  if (options.otlpEndpoint) {
    const endpoint = options.otlpEndpoint.replace(/\/$/, '');
    processors.push(new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }) }));
    metricReaders.push(
      new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url: `${endpoint}/v1/metrics` }) }),
    );
  }
  sdk = new NodeSDK({
    serviceName: options.serviceName,
    spanProcessors: processors,
    // Explicit, because the SDK's defaults would push metrics and logs to
    // localhost:4318 every minute whether or not a collector is configured,
    // and record metrics on every request for nobody. Logs go to stdout as JSON.
    metricReaders,
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation(),
      // The route's handler gets a span; each middleware layer (body parsers, request id…) would
      // add one per request for nothing an operator reads.
      new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE] }),
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
    ],
  });
  sdk.start();
}

export async function stopTelemetry(): Promise<void> {
  const running = sdk;
  const provider = meterProvider;
  const server = metricsServer;
  sdk = undefined;
  meterProvider = undefined;
  metricsServer = undefined;
  await running?.shutdown();
  await provider?.shutdown();
  await new Promise<void>((resolve) => (server?.listening ? server.close(() => resolve()) : resolve()));
}
