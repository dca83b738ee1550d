import 'reflect-metadata';
import pg from 'pg';
import { DataSource, type DataSourceOptions, type MixedList, type EntitySchema } from 'typeorm';
import { installPoolGuard } from './pool-guard.js';
import { ParameterFreeQueryLogger } from './query-logger.js';

export interface ServiceDataSourceOptions {
  readonly url: string;
  /** The service's own schema; its tables and its migrations table live there. */
  readonly schema: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own type for entity classes
  readonly entities: MixedList<Function | string | EntitySchema>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own type for migration classes
  readonly migrations: MixedList<Function | string>;
  readonly poolSize?: number;
  /** How long a statement waits for a free pooled connection before it fails (10 s unless given). */
  readonly acquireTimeoutMs?: number;
  readonly logging?: boolean;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** TypeORM options for one service: its schema, its migrations table, never `synchronize`. */
export function serviceDataSourceOptions(options: ServiceDataSourceOptions): DataSourceOptions {
  if (!SCHEMA_NAME.test(options.schema)) throw new Error(`invalid schema name ${options.schema}`);
  installPoolGuard();
  return {
    type: 'postgres',
    url: options.url,
    schema: options.schema,
    entities: options.entities,
    migrations: options.migrations,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    uuidExtension: 'pgcrypto',
    // Never TypeORM's console loggers: they print query parameters (secrets, personal data).
    logging: options.logging ? ['warn', 'migration'] : false,
    logger: new ParameterFreeQueryLogger(options.schema, options.logging ?? false),
    maxQueryExecutionTime: 1000,
    extra: {
      max: options.poolSize ?? 10,
      application_name: `strata-${options.schema}`,
      // An empty pool fails a request after this instead of holding it (and its callers) for ever.
      connectionTimeoutMillis: options.acquireTimeoutMs ?? 10_000,
    },
  };
}

/**
 * Runs `work` with a small data source of one service's schema, closed afterwards:
 * for the commands a service's process runs besides serving (`reencrypt`, …).
 */
export async function withServiceDataSource<T>(
  options: ServiceDataSourceOptions,
  work: (db: DataSource) => Promise<T>,
): Promise<T> {
  const db = new DataSource(serviceDataSourceOptions({ poolSize: 2, ...options }));
  await db.initialize();
  try {
    return await work(db);
  } finally {
    await db.destroy();
  }
}

/** Creates the database named in `url` when it does not exist yet. */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_-]{1,63}$/.test(name)) throw new Error(`invalid database name ${name}`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) {
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } catch (err) {
        // Another process created it meanwhile.
        if ((err as { code?: string }).code !== '42P04') throw err;
      }
    }
  } finally {
    await client.end();
  }
}

/**
 * Brings a service's schema up to date: creates the database and schema when
 * missing and runs pending migrations, under an advisory lock so that replicas
 * or parallel starts never run the same migration twice.
 */
export async function migrateService(options: ServiceDataSourceOptions): Promise<string[]> {
  await ensureDatabase(options.url);
  // Two connections: one holds the advisory lock, the other runs the migrations.
  const ds = new DataSource(serviceDataSourceOptions({ ...options, poolSize: 2 }));
  await ds.initialize();
  try {
    const runner = ds.createQueryRunner();
    await runner.connect();
    try {
      await runner.query('SELECT pg_advisory_lock(hashtext($1))', [`strata-migrate:${options.schema}`]);
      await runner.query(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"`);
      const ran = await ds.runMigrations({ transaction: 'each' });
      await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [`strata-migrate:${options.schema}`]);
      return ran.map((m) => m.name);
    } finally {
      await runner.release();
    }
  } finally {
    await ds.destroy();
  }
}
