import { loadConfigOrExit, reencryptCommand } from '@strata/platform';
import { createOrchestrationApp, migrateOrchestration } from './create-orchestration-app.js';
import { OrchestrationConfig } from './orchestration.config.js';

/** `node dist/main.js [migrate | upgrade | reencrypt [--check]]`: serve, only run the migrations, or move sealed secrets to the active key. */
export async function run(argv: string[] = process.argv.slice(2)): Promise<void> {
  const config = loadConfigOrExit(OrchestrationConfig, 'strata-orchestration');
  if (argv[0] === 'migrate') {
    const ran = await migrateOrchestration(config);
    process.stdout.write(
      `strata-orchestration: ${ran.length ? `ran ${ran.join(', ')}` : 'schema orchestration is up to date'}\n`,
    );
    return;
  }
  if (argv[0] === 'upgrade') {
    const { upgradeOrchestration } = await import('./orchestrations/reencrypt-orchestrations.js');
    await upgradeOrchestration(config);
    return;
  }
  if (argv[0] === 'reencrypt') {
    const { reencryptOrchestration } = await import('./orchestrations/reencrypt-orchestrations.js');
    await reencryptCommand('strata-orchestration', config, argv, (options) => reencryptOrchestration(config, options));
    return;
  }
  const app = await createOrchestrationApp(config);
  await app.listen(config.ORCHESTRATION_PORT, config.HOST);
}
