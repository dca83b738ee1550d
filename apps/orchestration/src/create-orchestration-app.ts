import type { NestExpressApplication } from '@nestjs/platform-express';
import { migrateService } from '@strata/db';
import { createServiceApp } from '@strata/platform';
import { ORCHESTRATION_ENTITIES, OrchestrationAppModule, type OrchestrationAppOptions } from './app.module.js';
import { ORCHESTRATION_SCHEMA, MIGRATIONS } from './migrations/index.js';
import { OrchestrationConfig } from './orchestration.config.js';

/** Runs the orchestration schema's migrations (the start script and the Helm hook call this, not every replica). */
export function migrateOrchestration(config: OrchestrationConfig): Promise<string[]> {
  return migrateService({
    url: config.DATABASE_URL,
    schema: ORCHESTRATION_SCHEMA,
    entities: ORCHESTRATION_ENTITIES,
    migrations: MIGRATIONS,
  });
}

/** Builds the orchestration service. Does not listen. Errors use the orchestration shape. */
export function createOrchestrationApp(
  config: OrchestrationConfig,
  options: OrchestrationAppOptions = {},
): Promise<NestExpressApplication> {
  return createServiceApp(OrchestrationAppModule.forRoot(config, options), {
    name: 'orchestration',
    config,
    description: 'Orchestrations: workflows of compute, decision and delay steps',
    defaultErrorShape: () => 'orchestration',
    // Webhook signatures cover the raw bytes.
    rawBodyPaths: /^\/orchestration\/ws\/[^/]+\/api\/v1\/(?:orchestrations\/[^/]+\/webhook$|webhooks\/)/,
  });
}
