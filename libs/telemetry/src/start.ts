import { register } from 'node:module';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';

export interface TelemetryOptions {
  readonly serviceName: string;
  /** OTLP/HTTP endpoint; spans are created (for log correlation) but not exported when absent. */
  readonly otlpEndpoint?: string | undefined;
  /** Extra processors, for tests that collect spans in memory. */
  readonly spanProcessors?: SpanProcessor[];
}

let sdk: NodeSDK | undefined;

/**
 * Starts OpenTelemetry. Call it before anything imports express, http or pg:
 * every `main.ts` awaits it first and then loads the application with a dynamic
 * `import()`, because ES modules are only patched when they load after the
 * instrumentation hook is registered.
 */
export function startTelemetry(options: TelemetryOptions): void {
  if (sdk) return;
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const processors: SpanProcessor[] = [...(options.spanProcessors ?? [])];
  if (options.otlpEndpoint) {
    processors.push(
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: `${options.otlpEndpoint.replace(/\/$/, '')}/v1/traces` }),
      }),
    );
  }
  sdk = new NodeSDK({
    serviceName: options.serviceName,
    spanProcessors: processors,
    instrumentations: [
      new HttpInstrumentation(),
      new ExpressInstrumentation(),
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
    ],
  });
  sdk.start();
}

export async function stopTelemetry(): Promise<void> {
  const running = sdk;
  sdk = undefined;
  await running?.shutdown();
}
