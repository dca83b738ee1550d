import { connect } from 'node:net';
import { randomBytes } from 'node:crypto';

/**
 * The Temporal engine's settings for a test stack when TEMPORAL_ADDRESS names a
 * Temporal frontend that accepts a connection; otherwise none, and the reason is
 * printed (no Temporal server can be installed on our machines, so CI skips
 * these). Each test run gets a task queue of its own.
 */
export async function temporalEngines(): Promise<[string, Record<string, string>][]> {
  const address = process.env['TEMPORAL_ADDRESS'];
  if (!address) {
    console.log('Temporal engine scenarios skipped: TEMPORAL_ADDRESS is not set');
    return [];
  }
  const reason = await unreachable(address);
  if (reason) {
    console.log(`Temporal engine scenarios skipped: TEMPORAL_ADDRESS ${address} is unreachable (${reason})`);
    return [];
  }
  return [
    [
      'temporal',
      {
        TEMPORAL_ADDRESS: address,
        TEMPORAL_NAMESPACE: process.env['TEMPORAL_NAMESPACE'] ?? 'default',
        TEMPORAL_TASK_QUEUE: `strata-test-${randomBytes(6).toString('hex')}`,
      },
    ],
  ];
}

/** Why `host:port` does not accept a TCP connection within 2 s, or undefined when it does. */
function unreachable(address: string): Promise<string | undefined> {
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at);
  const port = Number(address.slice(at + 1));
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('no answer in 2 s');
    });
    socket.once('error', (err) => resolve(err.message));
  });
}
