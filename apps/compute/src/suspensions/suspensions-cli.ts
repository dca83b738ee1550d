import { NatsConnectionHolder } from '@strata/platform';
import type { ComputeConfig } from '../compute.config.js';
import { liftSuspension, listSuspensions } from './suspensions-command.js';

const USAGE = 'usage: main.js suspensions [lift <workspace>]\n';

/**
 * `main.js suspensions`: one line of JSON per workspace whose runs lost
 * isolates (its losses, suspension and refused code); `main.js suspensions
 * lift <workspace>` forgets them. Answers the process's exit code.
 */
export async function suspensionsCommand(config: ComputeConfig, args: string[]): Promise<number> {
  const [verb, workspace, ...rest] = args;
  if (!(verb === undefined || (verb === 'lift' && workspace && rest.length === 0))) {
    process.stderr.write(USAGE);
    return 2;
  }
  const nats = new NatsConnectionHolder(config);
  try {
    const nc = await nats.get();
    if (verb === 'lift') {
      const lifted = await liftSuspension(nc, config.NATS_PREFIX, workspace!);
      process.stdout.write(
        `strata-compute: ${lifted ? `lifted ${workspace}` : `${workspace} has no lost isolates on record`}\n`,
      );
      return 0;
    }
    for (const entry of await listSuspensions(nc, config.NATS_PREFIX))
      process.stdout.write(`${JSON.stringify(entry)}\n`);
    return 0;
  } finally {
    await nats.onApplicationShutdown();
  }
}
