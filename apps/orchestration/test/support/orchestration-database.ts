import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { serviceDataSourceOptions } from '@strata/db';
import { loadConfig } from '@strata/platform';
import { createTestDatabase, type TestDatabase } from '@strata/testing';
import { ORCHESTRATION_ENTITIES } from '../../src/app.module.js';
import { migrateOrchestration } from '../../src/create-orchestration-app.js';
import { MIGRATIONS, ORCHESTRATION_SCHEMA } from '../../src/migrations/index.js';
import { OrchestrationConfig } from '../../src/orchestration.config.js';

/** A test database of its own with the orchestration schema migrated, and a data source on it. */
export interface OrchestrationTestDatabase {
  readonly ds: DataSource;
  readonly config: OrchestrationConfig;
  close(): Promise<void>;
}

export async function openOrchestrationTestDatabase(poolSize = 2): Promise<OrchestrationTestDatabase> {
  const db: TestDatabase = await createTestDatabase('strata_orchestration_test');
  const config = loadConfig(OrchestrationConfig, { ...process.env, STRATA_ENV: 'development', DATABASE_URL: db.url });
  await migrateOrchestration(config);
  const ds = new DataSource(
    serviceDataSourceOptions({
      url: db.url,
      schema: ORCHESTRATION_SCHEMA,
      entities: ORCHESTRATION_ENTITIES,
      migrations: MIGRATIONS,
      poolSize,
    }),
  );
  await ds.initialize();
  return {
    ds,
    config,
    async close() {
      await ds.destroy();
      await db.drop();
    },
  };
}
