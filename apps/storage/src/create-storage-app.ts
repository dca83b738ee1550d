import type { NestExpressApplication } from '@nestjs/platform-express';
import { migrateService } from '@strata/db';
import { createServiceApp } from '@strata/platform';
import { STORAGE_ENTITIES, StorageAppModule, type StorageAppOptions } from './app.module.js';
import { MIGRATIONS, STORAGE_SCHEMA } from './migrations/index.js';
import { StorageConfig } from './storage.config.js';

/** Runs the storage schema's migrations (the start script and the Helm hook call this, not every replica). */
export function migrateStorage(config: StorageConfig): Promise<string[]> {
  return migrateService({
    url: config.DATABASE_URL,
    schema: STORAGE_SCHEMA,
    entities: STORAGE_ENTITIES,
    migrations: MIGRATIONS,
  });
}

/** Builds the storage service. Does not listen. */
export function createStorageApp(
  config: StorageConfig,
  options: StorageAppOptions = {},
): Promise<NestExpressApplication> {
  return createServiceApp(StorageAppModule.forRoot(config, options), {
    name: 'storage',
    config,
    description: 'Storage: buckets, streamed uploads, downloads with ranges, signed links',
    defaultErrorShape: () => 'general',
    // Uploads are multipart, streamed by their handler: the JSON parser never reads them.
    rawBodyPaths: /^\/storage\/workspace\/[^/]+\/api\/v1\/upload\/?$/,
  });
}
