/**
 * The endpoint benchmark's baseline: the same endpoint function behind a bare
 * `node:http` server calling the sandbox engine directly (same isolates, same
 * limits), in the bench's process or, run as a script
 * (`node --no-node-snapshot bench/dist/bare-endpoint.js <isolates>`), in a
 * process of its own that prints its URL as one JSON line.
 */
import { fork } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ComputeConfig } from '@strata/compute';
import type { JsonValue, SandboxBridge, SandboxJob, SandboxLimits } from '@strata/sandbox';
import { createIsolatedVmEngine } from '@strata/sandbox/isolated-vm';

export const ENDPOINT_CODE = 'export default async (context) => ({ ok: true, n: context.req.payload.n });';

const defaults = new ComputeConfig();
const LIMITS: SandboxLimits = {
  memoryMb: defaults.COMPUTE_MEMORY_MB,
  cpuMs: defaults.COMPUTE_CPU_MS,
  wallMs: defaults.COMPUTE_ENDPOINT_GRACE_MS + 25_000,
  maxLogBytes: defaults.COMPUTE_MAX_LOG_BYTES,
  maxLogEntries: defaults.COMPUTE_MAX_LOG_ENTRIES,
  maxOutputBytes: defaults.COMPUTE_MAX_OUTPUT_BYTES,
};

export interface BareServer {
  readonly url: string;
  close(): Promise<void>;
}

/** The bare endpoint: node:http, the JSON body parsed, the sandbox engine called directly. */
export async function bareEndpointServer(isolates: number): Promise<BareServer> {
  const engine = createIsolatedVmEngine({ isolates, maxRunsPerIsolate: defaults.COMPUTE_RUNS_PER_ISOLATE });
  const bridge: SandboxBridge = { call: () => Promise.resolve(null) };
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const payload = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') as JsonValue;
      const job: SandboxJob = {
        kind: 'endpoint',
        code: ENDPOINT_CODE,
        triggerParams: {},
        executionParams: {},
        request: { method: req.method ?? 'POST', path: '/endpoints/bench', query: {}, headers: {}, payload },
        limits: LIMITS,
      };
      engine.run(job, bridge).then(
        (result) => {
          const response = result.response ?? { statusCode: 500, headers: {}, body: null };
          res.writeHead(response.statusCode, { 'content-type': 'application/json' });
          res.end(JSON.stringify(response.body));
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await engine.close();
    },
  };
}

/** The bare server in a child process of its own; `close` ends it. */
export async function spawnBareEndpointServer(isolates: number): Promise<BareServer> {
  const child = fork(fileURLToPath(import.meta.url), [String(isolates)], {
    execArgv: ['--no-node-snapshot'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.once('exit', (code) => reject(new Error(`bare endpoint server exited (${code}): ${output}`)));
  });
  return {
    url,
    async close() {
      if (child.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const server = await bareEndpointServer(Number(process.argv[2] ?? 2));
  process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
  process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
}
