import { DataSource } from 'typeorm';
import { serviceDataSourceOptions } from '@strata/db';
import type { AuthConfig } from '../auth.config.js';
import { IAM_SCHEMA, MIGRATIONS } from '../migrations/index.js';
import { SigningKeysService } from './signing-keys.service.js';

/** `node dist/main.js rotate-signing-key`: adds a new signing key (see docs/identity.md). */
export async function rotateSigningKey(config: AuthConfig): Promise<void> {
  const db = new DataSource(
    serviceDataSourceOptions({
      url: config.DATABASE_URL,
      schema: IAM_SCHEMA,
      entities: [],
      migrations: MIGRATIONS,
      poolSize: 2,
    }),
  );
  await db.initialize();
  try {
    const { kid, activatesAt } = await new SigningKeysService(db, config).rotate();
    process.stdout.write(`new signing key ${kid} signs from ${activatesAt.toISOString()}\n`);
  } finally {
    await db.destroy();
  }
}
