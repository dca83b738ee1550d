import { startTelemetry } from '@strata/telemetry';

startTelemetry({ serviceName: 'strata-gateway', otlpEndpoint: process.env['OTEL_EXPORTER_OTLP_ENDPOINT'] });
const { run } = await import('./run.js');
await run();
