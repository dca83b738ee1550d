import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';

/** A NATS prefix (streams, subjects, KV buckets) of this test run's own. */
export function testNatsPrefix(): string {
  return `t${randomBytes(5).toString('hex')}`;
}

/**
 * Ports handed to test servers: below Linux's ephemeral range (32768-60999 by
 * default), which the kernel gives to outgoing connections. A port taken from
 * that range (as `listen(0)` does) can be picked by one of the many client
 * sockets a test stack opens (Postgres, NATS, service to service) before the
 * server listens on it: EADDRINUSE. Here only another test picking the same
 * random port collides, and the bind check below catches one that is taken.
 */
const PORTS = { from: 20_000, to: 32_000 } as const;

/**
 * Each Jest worker process picks from a slice of its own, so two test files
 * running at once never pick the same port, and a service a test restarts on
 * its port (closed, then listening again) cannot lose it to another file's
 * pick in between. Outside Jest, the whole range. The slices of one run start
 * at an offset of its own (from the Jest parent's pid, which its workers share),
 * so two runs on one machine seldom share a slice (EADDRINUSE seen when they did).
 */
const PORT_SLICES = 8;
const PORT_RANGE = ((worker: number, runOffset: number) => {
  if (!(worker > 0)) return PORTS;
  const size = Math.floor((PORTS.to - PORTS.from) / PORT_SLICES);
  const from = PORTS.from + ((runOffset + worker - 1) % PORT_SLICES) * size;
  return { from, to: from + size };
})(Number(process.env['JEST_WORKER_ID']), process.ppid % PORT_SLICES);

/**
 * Where the next pick starts: ports are handed out in turn from a random start,
 * not at random. A stack asks for seven ports before it listens on any, so a
 * random pick could hand out one of them twice (about 1.4% of stacks with a
 * slice of 1500 ports: EADDRINUSE in a clean run); in turn, a port comes back
 * only after the whole slice has gone round.
 */
let nextPick = randomBytes(2).readUInt16BE();

/** A TCP port free right now on the loopback interface, outside the kernel's ephemeral range. */
export async function freePort(): Promise<number> {
  const size = PORT_RANGE.to - PORT_RANGE.from;
  for (let attempt = 0; attempt < size; attempt++) {
    const port = PORT_RANGE.from + (nextPick++ % size);
    if (await isFree(port)) return port;
  }
  throw new Error(`no free port found between ${PORT_RANGE.from} and ${PORT_RANGE.to}`);
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Polls until `check` returns a value other than undefined, or fails after `timeoutMs`. No fixed sleeps. */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms${last instanceof Error ? `: ${last.message}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
