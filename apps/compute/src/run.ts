import { loadConfigOrExit, reencryptCommand } from '@strata/platform';
import { ComputeConfig } from './compute.config.js';
import { createComputeApp, migrateCompute } from './create-compute-app.js';

/**
 * `node --no-node-snapshot dist/main.js [migrate | upgrade | worker | reencrypt [--check] | suspensions
 * [lift <workspace>]]`: serve the API, only run the migrations, move every envelope to the
 * active key, run a sandbox worker (a process of its own; scale workers by running more of
 * them), or list and lift the refusals after lost isolates (docs/runbooks.md).
 */
export async function run(argv: string[] = process.argv.slice(2)): Promise<void> {
  const config = loadConfigOrExit(ComputeConfig, 'strata-compute');
  if (argv[0] === 'migrate') {
    const ran = await migrateCompute(config);
    process.stdout.write(`strata-compute: ${ran.length ? `ran ${ran.join(', ')}` : 'schema compute is up to date'}\n`);
    return;
  }
  if (argv[0] === 'upgrade') {
    const { upgradeCompute } = await import('./reencrypt-compute.js');
    await upgradeCompute(config);
    return;
  }
  if (argv[0] === 'reencrypt') {
    const { reencryptCompute } = await import('./reencrypt-compute.js');
    await reencryptCommand('strata-compute', config, argv, (options) => reencryptCompute(config, options));
    return;
  }
  if (argv[0] === 'suspensions') {
    const { suspensionsCommand } = await import('./suspensions/suspensions-cli.js');
    process.exitCode = await suspensionsCommand(config, argv.slice(1));
    return;
  }
  if (argv[0] === 'worker') {
    const { startComputeWorker } = await import('./worker/start-worker.js');
    await startComputeWorker(config);
    return;
  }
  const app = await createComputeApp(config);
  await app.listen(config.COMPUTE_PORT, config.HOST);
}
