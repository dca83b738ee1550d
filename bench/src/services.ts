import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
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
import { loginWithPassword } from '@strata/sdk';
import { call } from '@strata/testkit';
import { createTestDatabase, eventually, freePort, testNatsPrefix } from '@strata/testing';

export interface Services {
  readonly authUrl: string;
  readonly dataUrl: string;
  readonly webhooksUrl: string;
  /** The compute API (started only when `compute` is among the apps). */
  readonly computeUrl: string;
  /** The sandbox worker's own HTTP port (endpoint calls, as the gateway routes them), when `worker` is started. */
  readonly workerUrl: string;
  /** The inbound service (started only when `inbound` is among the apps). */
  readonly inboundUrl: string;
  /** The orchestration service (started only when `orchestration` is among the apps). */
  readonly orchestrationUrl: string;
  /** The storage service (started only when `storage` is among the apps). */
  readonly storageUrl: string;
  readonly databaseUrl: string;
  /** The run's NATS subject prefix (streams and subjects of these services). */
  readonly natsPrefix: string;
  readonly adminEmail: string;
  readonly adminPassword: string;
  /** Starts a service process again after `stopApp` (waits until it is ready). */
  startApp(app: App): Promise<void>;
  /** Stops one service process (SIGTERM, graceful). */
  stopApp(app: App): Promise<void>;
  /** The process id of a running service. */
  pid(app: App): number | undefined;
  stop(): Promise<void>;
}

const APPS = ['auth', 'data', 'webhooks'] as const;
/** How long a service may take to answer /readyz (`BENCH_START_TIMEOUT_MS`; longer on a loaded machine). */
const START_TIMEOUT_MS = Number(process.env['BENCH_START_TIMEOUT_MS'] ?? 30_000);
/** Extra Node flags for the service processes, for example `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
const NODE_ARGS = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);

/**
 * Where a service's standard output (its log lines) goes: a file `<app>.log` in
 * `BENCH_LOG_DIR` when that is set, so an error during a run can be read afterwards;
 * nowhere otherwise.
 */
function logTo(app: string): 'ignore' | number {
  const dir = process.env['BENCH_LOG_DIR'];
  return dir ? openSync(join(dir, `${app}.log`), 'a') : 'ignore';
}
/**
 * A service process: the three HTTP services by default; `compute` (the compute API) and
 * `worker` (a sandbox worker, `apps/compute/dist/main.js worker`, no HTTP) when named.
 */
export type App = (typeof APPS)[number] | 'compute' | 'worker' | 'worker2' | 'inbound' | 'orchestration' | 'storage';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The auth, data and webhooks services (or the named ones) as separate processes, as
 * they run in production, on a database and NATS prefix of the run's own: the
 * benchmark's client and baseline do not share an event loop with the service
 * they measure. A benchmark starts only what it measures: every process shares
 * the machine's cores with the baseline and the client.
 */
export async function startServices(
  overrides: Record<string, string> = {},
  apps: readonly App[] = APPS,
): Promise<Services> {
  const db = await createTestDatabase('strata_bench');
  const [authPort, dataPort, webhooksPort, computePort, inboundPort, orchestrationPort, workerPort, storagePort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const authUrl = `http://127.0.0.1:${authPort}`;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATABASE_URL: db.url,
    NATS_PREFIX: testNatsPrefix(),
    AUTH_PORT: String(authPort),
    DATA_PORT: String(dataPort),
    WEBHOOKS_PORT: String(webhooksPort),
    COMPUTE_PORT: String(computePort),
    COMPUTE_WORKER_PORT: String(workerPort),
    INBOUND_PORT: String(inboundPort),
    ORCHESTRATION_PORT: String(orchestrationPort),
    STORAGE_PORT: String(storagePort),
    DATA_SERVICE_URL: `http://127.0.0.1:${dataPort}`,
    AUTH_ISSUER: `${authUrl}/oidc`,
    AUTH_INTERNAL_URL: authUrl,
    STRATA_ADMIN_EMAIL: 'bench@example.test',
    STRATA_ADMIN_PASSWORD: 'bench password',
    LOG_LEVEL: 'error',
    HOST: '127.0.0.1',
    // The published development key and password are accepted only when this is explicit.
    STRATA_ENV: 'development',
    ...overrides,
  };
  await migrateAuth(loadConfig(AuthConfig, env));
  await migrateData(loadConfig(DataConfig, env));
  await migrateWebhooks(loadConfig(WebhooksConfig, env));
  if (apps.includes('compute') || apps.includes('worker') || apps.includes('worker2'))
    await migrateCompute(loadConfig(ComputeConfig, env));
  if (apps.includes('inbound')) await migrateInbound(loadConfig(InboundConfig, env));
  if (apps.includes('orchestration')) await migrateOrchestration(loadConfig(OrchestrationConfig, env));
  if (apps.includes('storage')) await migrateStorage(loadConfig(StorageConfig, env));
  const urls: Record<Exclude<App, 'worker' | 'worker2'>, string> = {
    auth: authUrl,
    data: `http://127.0.0.1:${dataPort}`,
    webhooks: `http://127.0.0.1:${webhooksPort}`,
    compute: `http://127.0.0.1:${computePort}`,
    inbound: `http://127.0.0.1:${inboundPort}`,
    orchestration: `http://127.0.0.1:${orchestrationPort}`,
    storage: `http://127.0.0.1:${storagePort}`,
  };
  const children = new Map<App, ChildProcess>();
  const startApp = async (app: App) => {
    if (app === 'worker') {
      children.set(app, await spawnWorker(env));
      return;
    }
    if (app === 'worker2') {
      // A second sandbox worker: its endpoint route on a port of its own choosing.
      children.set(app, await spawnWorker({ ...env, COMPUTE_WORKER_PORT: '0' }));
      return;
    }
    children.set(
      app,
      spawn(process.execPath, [...NODE_ARGS, '--no-node-snapshot', `${root}apps/${app}/dist/main.js`], {
        env,
        stdio: ['ignore', logTo(app), 'inherit'],
      }),
    );
    await eventually(
      async () => ((await fetch(`${urls[app]}/readyz`).catch(() => undefined))?.ok ? true : undefined),
      START_TIMEOUT_MS,
    );
  };
  const stopApp = async (app: App) => {
    const child = children.get(app);
    children.delete(app);
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  };
  await Promise.all(apps.map(startApp));
  return {
    authUrl,
    dataUrl: urls.data,
    webhooksUrl: urls.webhooks,
    computeUrl: urls.compute,
    workerUrl: `http://127.0.0.1:${workerPort}`,
    inboundUrl: urls.inbound,
    orchestrationUrl: urls.orchestration,
    storageUrl: urls.storage,
    databaseUrl: db.url,
    natsPrefix: env['NATS_PREFIX']!,
    adminEmail: env['STRATA_ADMIN_EMAIL']!,
    adminPassword: env['STRATA_ADMIN_PASSWORD']!,
    startApp,
    stopApp,
    pid: (app) => children.get(app)?.pid,
    async stop() {
      await Promise.all([...children.keys()].map(stopApp));
      await db.drop();
    },
  };
}

/**
 * A sandbox worker process; ready once it logs `worker ready` (its job consumer is
 * pulling and its endpoint route listening). It logs at `log` level for that line only: a worker logs nothing per run.
 */
async function spawnWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [...NODE_ARGS, '--no-node-snapshot', `${root}apps/compute/dist/main.js`, 'worker'],
    { env: { ...env, LOG_LEVEL: 'log' }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`worker did not start in ${START_TIMEOUT_MS} ms:\n${output}`)),
      START_TIMEOUT_MS,
    );
    child.stdout.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
      if (output.includes('worker ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited (${code}) before it was ready:\n${output}`));
    });
  });
  return child;
}

/** Creates the workspace `bench` as the administrator; answers a token scoped to it and the data API base. */
export async function benchWorkspace(
  services: Pick<Services, 'authUrl' | 'dataUrl' | 'adminEmail' | 'adminPassword'>,
): Promise<{ token: string; base: string }> {
  const ws = 'bench';
  const login = { authUrl: services.authUrl, email: services.adminEmail, password: services.adminPassword };
  const first = await loginWithPassword(login);
  const workspace = await call('POST', `${services.authUrl}/workspace/api/v1/workspaces`, {
    token: first.accessToken,
    body: { slug: ws, name: 'Bench' },
  });
  if (workspace.status !== 201) throw new Error(`workspace: ${JSON.stringify(workspace.body)}`);
  const token = (await loginWithPassword({ ...login, workspace: ws })).accessToken;
  return { token, base: `${services.dataUrl}/data/workspace/${ws}/api/v1` };
}

/** The services with rate limits lifted: they would cap a benchmark. */
export function startUnlimitedServices(
  overrides: Record<string, string> = {},
  apps: readonly App[] = APPS,
): Promise<Services> {
  return startServices(
    {
      RATE_LIMIT_WRITE_PER_MINUTE: '100000000',
      RATE_LIMIT_READ_PER_MINUTE: '100000000',
      RATE_LIMIT_BULK_PER_MINUTE: '100000000',
      RATE_LIMIT_EXECUTE_PER_MINUTE: '100000000',
      ...overrides,
    },
    apps,
  );
}
