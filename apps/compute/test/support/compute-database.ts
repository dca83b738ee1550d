import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { loadConfig } from '@strata/platform';
import { createTestDatabase } from '@strata/testing';
import { ComputeConfig } from '../../src/compute.config.js';
import { computeDataSourceOptions } from '../../src/compute-data-source.js';
import { migrateCompute } from '../../src/create-compute-app.js';

/** A test database of its own with the compute schema migrated, and one function of `workspace` to run. */
export interface ComputeTestDatabase {
  readonly ds: DataSource;
  readonly functionId: string;
  close(): Promise<void>;
}

export async function openComputeTestDatabase(workspace: string, poolSize = 4): Promise<ComputeTestDatabase> {
  const db = await createTestDatabase('strata_compute_test');
  const config = loadConfig(ComputeConfig, { ...process.env, STRATA_ENV: 'development', DATABASE_URL: db.url });
  await migrateCompute(config);
  const ds = new DataSource(computeDataSourceOptions(config, poolSize));
  await ds.initialize();
  const functionId = randomUUID();
  await ds.query(
    `INSERT INTO compute.functions (id, workspace_slug, name, code, version, code_hash, created_by, updated_by)
     VALUES ($1, $2, 'fn', 'async function run() {}', 1, $3, 'test', 'test')`,
    [functionId, workspace, 'a'.repeat(64)],
  );
  return {
    ds,
    functionId,
    async close() {
      await ds.destroy();
      await db.drop();
    },
  };
}
