import type { NestExpressApplication } from '@nestjs/platform-express';
import { migrateService } from '@strata/db';
import { createServiceApp } from '@strata/platform';
import { WebhooksAppModule, type WebhooksAppOptions } from './app.module.js';
import { WEBHOOKS_SCHEMA, MIGRATIONS } from './migrations/index.js';
import { WebhooksConfig } from './webhooks.config.js';

/** Runs the webhooks schema's migrations (the start script and the Helm hook call this, not every replica). */
export function migrateWebhooks(config: WebhooksConfig): Promise<string[]> {
  return migrateService({ url: config.DATABASE_URL, schema: WEBHOOKS_SCHEMA, entities: [], migrations: MIGRATIONS });
}

/** Builds the webhooks service. Does not listen. Errors use the general API shape. */
export function createWebhooksApp(
  config: WebhooksConfig,
  options: WebhooksAppOptions = {},
): Promise<NestExpressApplication> {
  return createServiceApp(WebhooksAppModule.forRoot(config, options), {
    name: 'webhooks',
    config,
    description: 'Outbound webhooks: subscriptions, signed deliveries, retries, replay and health',
    defaultErrorShape: () => 'general',
  });
}
