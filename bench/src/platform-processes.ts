/**
 * The whole platform as `npm start` runs it, for `bench/src/platform.ts`: every process of
 * `scripts/services.list` (the file scripts/start.sh reads its command lines from, so the
 * node flags cannot drift apart), with start.sh's environment defaults (`STRATA_ENV`
 * development, the default log level), each process's output and errors piped through
 * `sed -u "s/^/[name] /"` as start.sh pipes them, on a database and NATS prefix of the
 * run's own and free ports. Rate limits are lifted: they would cap a benchmark.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AuthConfig, migrateAuth } from '@strata/auth';
import { ComputeConfig, migrateCompute } from '@strata/compute';
import { DataConfig, migrateData } from '@strata/data';
import { WebhooksConfig, migrateWebhooks } from '@strata/webhooks';
import { InboundConfig, migrateInbound } from '@strata/inbound';
import { OrchestrationConfig, migrateOrchestration } from '@strata/orchestration';
import { StorageConfig, migrateStorage } from '@strata/storage';
import { loadConfig } from '@strata/platform';
import { createTestDatabase, eventually, freePort, testNatsPrefix } from '@strata/testing';
import { childrenOf } from './cpu.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
/** Extra Node flags for every process, for example `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);

export type PlatformProcess =
  'auth' | 'data' | 'webhooks' | 'compute' | 'compute-worker' | 'inbound' | 'storage' | 'orchestration' | 'gateway';

/**
 * The node arguments of each process, read from scripts/services.list (or from the list
 * `BENCH_SERVICES_LIST` names, to compare other flags).
 */
export function serviceCommandLines(): Map<PlatformProcess, string[]> {
  const list = process.env['BENCH_SERVICES_LIST'] ?? join(root, 'scripts/services.list');
  const lines = readFileSync(list, 'utf8').split('\n');
  const out = new Map<PlatformProcess, string[]>();
  for (const line of lines) {
    if (!line.trim() || line.startsWith('#')) continue;
    const [name, ...args] = line.trim().split(/\s+/);
    out.set(name as PlatformProcess, args);
  }
  return out;
}

export interface Platform {
  readonly gatewayUrl: string;
  readonly authUrl: string;
  readonly dataUrl: string;
  readonly databaseName: string;
  /** The run's database, as the services connect to it. */
  readonly databaseUrl: string;
  readonly adminEmail: string;
  readonly adminPassword: string;
  /** Each process's pid, and the log prefixers' (`sed`). */
  pids(): Record<string, number | undefined>;
  /** The compute worker's sandbox processes alive now. */
  sandboxPids(): number[];
  stop(): Promise<void>;
}

interface Running {
  readonly node: ChildProcess;
  readonly sed: ChildProcess;
}

/** `node <args>` with its stdout and stderr both into `sed -u "s/^/[name] /"` (start.sh's `2>&1 | sed`). */
function spawnPiped(name: string, args: readonly string[], env: NodeJS.ProcessEnv): Running {
  const dir = process.env['BENCH_LOG_DIR'];
  const out = dir ? openSync(join(dir, `platform-${name}.log`), 'a') : 'ignore';
  const sed = spawn('sed', ['-u', `s/^/[${name}] /`], { stdio: ['pipe', out, 'inherit'] });
  const node = spawn(process.execPath, [...NODE_ARGS, ...args], {
    cwd: root,
    env,
    stdio: ['ignore', sed.stdin!, sed.stdin!],
  });
  // The child holds its own copies of the pipe: sed ends when the service does.
  sed.stdin!.destroy();
  return { node, sed };
}

/**
 * Starts the processes of scripts/services.list (all of them, or only those named) as
 * start.sh starts them.
 */
export async function startPlatform(only?: readonly PlatformProcess[]): Promise<Platform> {
  const db = await createTestDatabase('strata_bench');
  const names = [
    'auth',
    'data',
    'webhooks',
    'compute',
    'worker',
    'inbound',
    'storage',
    'orchestration',
    'gateway',
  ] as const;
  const ports = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await freePort()] as const))) as Record<
    (typeof names)[number],
    number
  >;
  const url = (n: (typeof names)[number]) => `http://127.0.0.1:${ports[n]}`;
  const storageDir = mkdtempSync(join(tmpdir(), 'strata-bench-storage-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // scripts/start.sh: `export STRATA_ENV="${STRATA_ENV:-development}"`; no LOG_LEVEL (the default, `log`).
    STRATA_ENV: process.env['STRATA_ENV'] ?? 'development',
    DATABASE_URL: db.url,
    NATS_PREFIX: testNatsPrefix(),
    HOST: '127.0.0.1',
    AUTH_PORT: String(ports.auth),
    DATA_PORT: String(ports.data),
    WEBHOOKS_PORT: String(ports.webhooks),
    COMPUTE_PORT: String(ports.compute),
    COMPUTE_WORKER_PORT: String(ports.worker),
    INBOUND_PORT: String(ports.inbound),
    STORAGE_PORT: String(ports.storage),
    STORAGE_LOCAL_DIR: storageDir,
    ORCHESTRATION_PORT: String(ports.orchestration),
    GATEWAY_PORT: String(ports.gateway),
    AUTH_SERVICE_URL: url('auth'),
    DATA_SERVICE_URL: url('data'),
    COMPUTE_SERVICE_URL: url('compute'),
    COMPUTE_WORKER_SERVICE_URL: url('worker'),
    ORCHESTRATION_SERVICE_URL: url('orchestration'),
    WEBHOOKS_SERVICE_URL: url('webhooks'),
    INBOUND_SERVICE_URL: url('inbound'),
    STORAGE_SERVICE_URL: url('storage'),
    AUTH_ISSUER: `${url('auth')}/oidc`,
    AUTH_INTERNAL_URL: url('auth'),
    STRATA_ADMIN_EMAIL: 'bench@example.test',
    STRATA_ADMIN_PASSWORD: 'bench password',
    RATE_LIMIT_WRITE_PER_MINUTE: '100000000',
    RATE_LIMIT_READ_PER_MINUTE: '100000000',
    RATE_LIMIT_BULK_PER_MINUTE: '100000000',
    RATE_LIMIT_EXECUTE_PER_MINUTE: '100000000',
  };
  delete env['LOG_LEVEL'];
  const plain = env as Record<string, string>;
  await migrateAuth(loadConfig(AuthConfig, plain));
  await migrateData(loadConfig(DataConfig, plain));
  await migrateWebhooks(loadConfig(WebhooksConfig, plain));
  await migrateCompute(loadConfig(ComputeConfig, plain));
  await migrateInbound(loadConfig(InboundConfig, plain));
  await migrateOrchestration(loadConfig(OrchestrationConfig, plain));
  await migrateStorage(loadConfig(StorageConfig, plain));

  const commands = serviceCommandLines();
  const running = new Map<PlatformProcess, Running>();
  for (const [name, args] of commands) {
    if (!only || only.includes(name)) running.set(name, spawnPiped(name, args, env));
  }
  const ready: Record<PlatformProcess, string> = {
    auth: `${url('auth')}/readyz`,
    data: `${url('data')}/readyz`,
    webhooks: `${url('webhooks')}/readyz`,
    compute: `${url('compute')}/readyz`,
    'compute-worker': `${url('worker')}/readyz`,
    inbound: `${url('inbound')}/readyz`,
    storage: `${url('storage')}/readyz`,
    orchestration: `${url('orchestration')}/readyz`,
    gateway: `${url('gateway')}/healthz`,
  };
  const stop = async () => {
    await Promise.all(
      [...running.values()].map(
        ({ node }) =>
          new Promise<void>((resolve) => {
            if (node.exitCode !== null || node.signalCode !== null) return resolve();
            node.once('exit', () => resolve());
            node.kill('SIGTERM');
          }),
      ),
    );
    await db.drop();
    rmSync(storageDir, { recursive: true, force: true });
  };
  try {
    // Five minutes: on a loaded 2-core machine eight Nest processes starting at once take a while.
    await Promise.all(
      [...running.keys()].map((name) =>
        eventually(
          async () => ((await fetch(ready[name]).catch(() => undefined))?.ok ? true : undefined),
          300_000,
        ).catch((err: unknown) => {
          throw new Error(`${name} not ready: ${String(err)}`);
        }),
      ),
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    gatewayUrl: url('gateway'),
    authUrl: url('auth'),
    dataUrl: url('data'),
    databaseName: db.name,
    databaseUrl: db.url,
    adminEmail: env['STRATA_ADMIN_EMAIL']!,
    adminPassword: env['STRATA_ADMIN_PASSWORD']!,
    pids() {
      const out: Record<string, number | undefined> = {};
      for (const [name, r] of running) {
        out[name] = r.node.pid;
        out[`log pipe ${name}`] = r.sed.pid;
      }
      return out;
    },
    sandboxPids: () => {
      const worker = running.get('compute-worker')?.node.pid;
      return worker === undefined ? [] : childrenOf(worker);
    },
    stop,
  };
}
