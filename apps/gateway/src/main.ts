import { startTelemetry, telemetryFromEnv } from '@strata/telemetry';

startTelemetry(telemetryFromEnv('strata-gateway'));
const { run } = await import('./run.js');
await run();
