import { loadConfigOrExit, reencryptCommand } from '@strata/platform';
import { createWebhooksApp, migrateWebhooks } from './create-webhooks-app.js';
import { WebhooksConfig } from './webhooks.config.js';

/**
 * `node dist/main.js [migrate | upgrade | reencrypt [--check]]`: serve, only run the migrations,
 * or move every stored secret to the active encryption key (docs/runbooks.md).
 */
export async function run(argv: string[] = process.argv.slice(2)): Promise<void> {
  const config = loadConfigOrExit(WebhooksConfig, 'strata-webhooks');
  if (argv[0] === 'migrate') {
    const ran = await migrateWebhooks(config);
    process.stdout.write(
      `strata-webhooks: ${ran.length ? `ran ${ran.join(', ')}` : 'schema webhooks is up to date'}\n`,
    );
    return;
  }
  if (argv[0] === 'upgrade') {
    const { upgradeWebhooks } = await import('./subscriptions/reencrypt-subscriptions.js');
    await upgradeWebhooks(config);
    return;
  }
  if (argv[0] === 'reencrypt') {
    const { reencryptWebhooks } = await import('./subscriptions/reencrypt-subscriptions.js');
    await reencryptCommand('strata-webhooks', config, argv, (options) => reencryptWebhooks(config, options));
    return;
  }
  const app = await createWebhooksApp(config);
  await app.listen(config.WEBHOOKS_PORT, config.HOST);
}
