import { startTelemetry, telemetryFromEnv } from '@strata/telemetry';

// Telemetry first, then the application through a dynamic import, so that http,
// express and pg load after the instrumentation hook is registered.
startTelemetry(telemetryFromEnv('strata-storage'));
const { run } = await import('./run.js');
await run();
