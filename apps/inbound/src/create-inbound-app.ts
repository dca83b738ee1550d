import type { NestExpressApplication } from '@nestjs/platform-express';
import { migrateService } from '@strata/db';
import { createServiceApp } from '@strata/platform';
import { INBOUND_ENTITIES, InboundAppModule, type InboundAppOptions } from './app.module.js';
import { ArrivalsService } from './arrivals/arrivals.service.js';
import { captureRoutes } from './arrivals/capture-routes.js';
import { InboundConfig } from './inbound.config.js';
import { INBOUND_SCHEMA, MIGRATIONS } from './migrations/index.js';

/** Runs the inbound schema's migrations (the start script and the Helm hook call this, not every replica). */
export function migrateInbound(config: InboundConfig): Promise<string[]> {
  return migrateService({
    url: config.DATABASE_URL,
    schema: INBOUND_SCHEMA,
    entities: INBOUND_ENTITIES,
    migrations: MIGRATIONS,
  });
}

/** Builds the inbound service. Does not listen. */
export function createInboundApp(
  config: InboundConfig,
  options: InboundAppOptions = {},
): Promise<NestExpressApplication> {
  return createServiceApp(InboundAppModule.forRoot(config, options), {
    name: 'inbound',
    config,
    description: 'Inbound capture: http-trigger arrivals, their listing and replay',
    defaultErrorShape: (path) => (/\/(?:http-trigger|webhook)\//.test(path) ? 'functions' : 'general'),
    // Signatures cover the raw bytes: the entry points read their bodies as sent.
    rawBodyPaths: /^\/data\/workspace\/[^/]+\/api\/v1\/(?:http-trigger|webhook)\//,
    directRoutes: (app) => captureRoutes(app.get(ArrivalsService)),
  });
}
