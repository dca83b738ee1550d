import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, freePort } from '@strata/testing';

/** The machine's NATS server (Debian's nats-server package). */
export const NATS_SERVER = '/usr/sbin/nats-server';

/** A NATS server with JetStream that a test started, on a port and store of its own. */
export interface NatsServer {
  readonly url: string;
  /** What it logged so far (permission violations among it). */
  log(): string;
  stop(): Promise<void>;
}

/**
 * Starts `nats-server -js -sd <store> -c <config>` whose configuration includes
 * `include` (an `authorization` block, as the chart renders it) beside it, with
 * `env` as its environment (the passwords the block names as `$VARIABLES`).
 * Resolves once it accepts connections.
 */
export async function startNatsServer(include: string, env: Record<string, string>): Promise<NatsServer> {
  const dir = mkdtempSync(join(tmpdir(), 'strata-nats-'));
  const port = await freePort();
  writeFileSync(join(dir, 'auth.conf'), include);
  writeFileSync(join(dir, 'nats.conf'), `listen: 127.0.0.1:${port}\ninclude ./auth.conf\n`);
  const logFile = join(dir, 'nats.log');
  const child: ChildProcess = spawn(
    NATS_SERVER,
    ['-js', '-sd', join(dir, 'store'), '-c', join(dir, 'nats.conf'), '-l', logFile],
    { env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const log = () => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  try {
    await eventually(() => {
      if (child.exitCode !== null) throw new Error(`nats-server exited: ${stderr}${log()}`);
      return accepts(port);
    }, 20_000);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    log,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** True once a TCP connection to the port is accepted (undefined before, for `eventually`). */
function accepts(port: number): Promise<true | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(undefined));
  });
}
