import { loadConfigOrExit, reencryptCommand } from '@strata/platform';
import { createInboundApp, migrateInbound } from './create-inbound-app.js';
import { InboundConfig } from './inbound.config.js';

/** `node dist/main.js [migrate | upgrade | reencrypt [--check]]`: serve, only run the migrations, or move sealed arrivals to the active key. */
export async function run(argv: string[] = process.argv.slice(2)): Promise<void> {
  const config = loadConfigOrExit(InboundConfig, 'strata-inbound');
  if (argv[0] === 'migrate') {
    const ran = await migrateInbound(config);
    process.stdout.write(`strata-inbound: ${ran.length ? `ran ${ran.join(', ')}` : 'schema inbound is up to date'}\n`);
    return;
  }
  if (argv[0] === 'upgrade') {
    const { upgradeInbound } = await import('./events/reencrypt-arrivals.js');
    await upgradeInbound(config);
    return;
  }
  if (argv[0] === 'reencrypt') {
    const { reencryptInbound } = await import('./events/reencrypt-arrivals.js');
    await reencryptCommand('strata-inbound', config, argv, (options) => reencryptInbound(config, options));
    return;
  }
  const app = await createInboundApp(config);
  await app.listen(config.INBOUND_PORT, config.HOST);
}
