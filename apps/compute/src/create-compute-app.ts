import type { NestExpressApplication } from '@nestjs/platform-express';
import { migrateService } from '@strata/db';
import { createServiceApp } from '@strata/platform';
import { ComputeAppModule, type ComputeAppOptions } from './app.module.js';
import { COMPUTE_ENTITIES } from './compute-data-source.js';
import { ComputeConfig } from './compute.config.js';
import { EndpointCalls } from './endpoints/endpoint-calls.service.js';
import { endpointRoutes } from './endpoints/endpoint-routes.js';
import { ENDPOINT_CALL_PATHS } from './endpoints/endpoints.controller.js';
import { COMPUTE_SCHEMA, MIGRATIONS } from './migrations/index.js';

/** Runs the compute schema's migrations (the start script and the Helm hook call this, not every replica). */
export function migrateCompute(config: ComputeConfig): Promise<string[]> {
  return migrateService({
    url: config.DATABASE_URL,
    schema: COMPUTE_SCHEMA,
    entities: COMPUTE_ENTITIES,
    migrations: MIGRATIONS,
  });
}

/** Builds the compute API. Does not listen. Errors use the functions shape. */
export function createComputeApp(
  config: ComputeConfig,
  options: ComputeAppOptions = {},
): Promise<NestExpressApplication> {
  return createServiceApp(ComputeAppModule.forRoot(config, options), {
    name: 'compute',
    config,
    description: 'Compute functions, their versions, drafts, test runs and function runs',
    defaultErrorShape: () => 'functions',
    // Endpoint triggers read their bodies as sent: hmac signatures cover the raw bytes, and any text is passed on.
    rawBodyPaths: ENDPOINT_CALL_PATHS,
    directRoutes: (app) => endpointRoutes(app.get(EndpointCalls)),
  });
}
