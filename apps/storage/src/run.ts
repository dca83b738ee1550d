import { loadConfigOrExit } from '@strata/platform';
import { createStorageApp, migrateStorage } from './create-storage-app.js';
import { StorageConfig } from './storage.config.js';

/** `node dist/main.js [migrate | upgrade]`: serve, or only run the migrations (upgrade has no steps yet). */
export async function run(argv: string[] = process.argv.slice(2)): Promise<void> {
  const config = loadConfigOrExit(StorageConfig, 'strata-storage');
  if (argv[0] === 'migrate') {
    const ran = await migrateStorage(config);
    process.stdout.write(`strata-storage: ${ran.length ? `ran ${ran.join(', ')}` : 'schema storage is up to date'}\n`);
    return;
  }
  if (argv[0] === 'upgrade') {
    // No stored value of this service needs re-sealing by a migration yet (docs/runbooks.md, "Upgrade steps").
    process.stdout.write('strata-storage: no upgrade steps due\n');
    return;
  }
  const app = await createStorageApp(config);
  await app.listen(config.STORAGE_PORT, config.HOST);
}
