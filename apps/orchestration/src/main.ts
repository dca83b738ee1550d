import { startTelemetry } from '@strata/telemetry';

// Telemetry first, then the application through a dynamic import, so that http,
// express and pg load after the instrumentation hook is registered.
startTelemetry({ serviceName: 'strata-orchestration', otlpEndpoint: process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] });
const { run } = await import('./run.js');
await run();
