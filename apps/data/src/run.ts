import { loadConfigOrExit, reencryptCommand } from '@strata/platform';
import { createDataApp, migrateData } from './create-data-app.js';
import { DataConfig } from './data.config.js';

/**
 * `node dist/main.js [migrate | upgrade | reencrypt [--check]]`: serve, only run the migrations,
 * or move every stored secret to the active key (docs/runbooks.md).
 */
export async function run(argv: string[] = process.argv.slice(2)): Promise<void> {
  const config = loadConfigOrExit(DataConfig, 'strata-data');
  if (argv[0] === 'migrate') {
    const ran = await migrateData(config);
    process.stdout.write(`strata-data: ${ran.length ? `ran ${ran.join(', ')}` : 'schema data is up to date'}\n`);
    return;
  }
  if (argv[0] === 'upgrade') {
    const { upgradeData } = await import('./secrets/reencrypt-records.js');
    await upgradeData(config);
    return;
  }
  if (argv[0] === 'reencrypt') {
    const { reencryptData } = await import('./secrets/reencrypt-records.js');
    await reencryptCommand('strata-data', config, argv, (options) => reencryptData(config, options));
    return;
  }
  const app = await createDataApp(config);
  await app.listen(config.DATA_PORT, config.HOST);
}
