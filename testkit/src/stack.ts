import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import type { Server } from 'node:http';
import path from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { AuthConfig, createAuthApp, migrateAuth, UsersService } from '@strata/auth';
import { ComputeConfig, createComputeApp, migrateCompute } from '@strata/compute';
import { DataConfig, createDataApp, migrateData } from '@strata/data';
import { GatewayConfig, createGateway, listen } from '@strata/gateway';
import { InboundConfig, createInboundApp, migrateInbound } from '@strata/inbound';
import { OrchestrationConfig, createOrchestrationApp, migrateOrchestration } from '@strata/orchestration';
import { StorageConfig, createStorageApp, migrateStorage } from '@strata/storage';
import { WebhooksConfig, createWebhooksApp, migrateWebhooks } from '@strata/webhooks';
import { loadConfig, type Clock } from '@strata/platform';
import { loginWithPassword } from '@strata/sdk';
import { createTestDatabase, freePort, testNatsPrefix, type TestDatabase } from '@strata/testing';

/** How a stack is started besides its settings. */
export interface StackOptions {
  /**
   * A clock per service (a `ManualClock` of @strata/testing, typically) for its
   * time-dependent logic: the webhooks schedule, leases, breaker and rotation
   * grace; the data service's record expiry; every service's rate-limit windows.
   * Restarted services and replicas get the same clock. Services not named keep
   * the system clock.
   */
  readonly clocks?: {
    readonly auth?: Clock;
    readonly data?: Clock;
    readonly webhooks?: Clock;
    readonly compute?: Clock;
    readonly inbound?: Clock;
    readonly orchestration?: Clock;
    readonly storage?: Clock;
  };
  /** Sandbox worker processes to start (default 0: only tests that run functions need them; see `startWorker`). */
  readonly workers?: number;
  /**
   * Start the storage service too (default false: only the tests of files need it, and every
   * stack would otherwise pay its start-up; without it the gateway's storage routes answer 502).
   */
  readonly storage?: boolean;
  /**
   * Settings of one service on top of the stack's (its own NATS user, say); the workers get
   * `compute-worker`'s over compute's. Restarts and replicas keep them.
   */
  readonly env?: Partial<Record<StackService, Record<string, string>>>;
}

/** The processes of a stack, as `StackOptions.env` names them. */
export type StackService =
  'auth' | 'data' | 'webhooks' | 'compute' | 'compute-worker' | 'inbound' | 'orchestration' | 'storage' | 'gateway';

/** A sandbox worker: a child process running `apps/compute/dist/main.js worker` (the build must be current). */
export interface WorkerProcess {
  readonly pid: number;
  /** Where it serves endpoint calls itself (`{url}/data/workspace/{ws}/api/v1/endpoints/{path}`) and its health. */
  readonly url: string;
  /** Sends `signal` (SIGTERM by default) and waits for the process to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Resolves once the process has ended, however it ended. */
  readonly exited: Promise<WorkerExit>;
}

/** How a worker process ended: its exit code, or the signal that ended it. */
export interface WorkerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface Stack {
  readonly authUrl: string;
  readonly baseUrl: string;
  /** The data service itself, not through the gateway. */
  readonly dataUrl: string;
  readonly issuer: string;
  readonly adminEmail: string;
  readonly adminPassword: string;
  readonly authConfig: AuthConfig;
  /** The per-run database and NATS prefix, for tests that look underneath the API. */
  readonly databaseUrl: string;
  readonly natsPrefix: string;
  /** Starts one more data-service replica on the same database and NATS prefix (not behind the gateway). */
  startDataReplica(overrides?: Record<string, string>): Promise<INestApplication>;
  /**
   * Creates a user who is not a platform administrator (the platform has no sign-up API: an
   * operator creates users), who can then log in and create workspaces of their own.
   */
  createUser(email: string, password: string): Promise<void>;
  /** Stops the auth service and starts a fresh one on the same port and database, with `overrides` on top. */
  restartAuth(overrides?: Record<string, string>): Promise<void>;
  /** Stops the data service and starts a fresh one on the same port (behind the gateway), with `overrides` on top. */
  restartData(overrides?: Record<string, string>): Promise<void>;
  /** Stops the webhooks service (gracefully) and starts a fresh one on the same port, with `overrides` on top. */
  restartWebhooks(overrides?: Record<string, string>): Promise<void>;
  /** Stops the webhooks service; `restartWebhooks` brings it back. */
  stopWebhooks(): Promise<void>;
  /** Starts one more webhooks replica on the same database and NATS prefix (not behind the gateway). */
  startWebhooksReplica(overrides?: Record<string, string>): Promise<INestApplication>;
  /** The compute service itself, not through the gateway. */
  readonly computeUrl: string;
  /**
   * Starts a sandbox worker process on the stack's database and NATS prefix, with `overrides` on top. The
   * gateway sends endpoint calls to one worker's port (`workerUrl`): the first started while no worker holds it.
   */
  startWorker(overrides?: Record<string, string>): Promise<WorkerProcess>;
  /** The worker port behind the gateway (endpoint calls): refused while no running worker holds it. */
  readonly workerUrl: string;
  /** The inbound service itself, not through the gateway. */
  readonly inboundUrl: string;
  /** The storage service itself, not through the gateway. */
  readonly storageUrl: string;
  /** The storage service's settings (its STORAGE_LOCAL_DIR: a temporary directory of this stack unless given). */
  readonly storageConfig: StorageConfig;
  /** Starts one more orchestration replica on the same database and NATS prefix (not behind the gateway). */
  startOrchestrationReplica(overrides?: Record<string, string>): Promise<INestApplication>;
  /** Stops the orchestration service and starts a fresh one on the same port, with `overrides` on top. */
  restartOrchestration(overrides?: Record<string, string>): Promise<void>;
  /** Stops the inbound service and starts a fresh one on the same port, with `overrides` on top. */
  restartInbound(overrides?: Record<string, string>): Promise<void>;
  /** Starts one more inbound replica on the same database and NATS prefix (not behind the gateway). */
  startInboundReplica(overrides?: Record<string, string>): Promise<INestApplication>;
  /** Stops the compute API and starts a fresh one on the same port, with `overrides` on top. */
  restartCompute(overrides?: Record<string, string>): Promise<void>;
  /** Starts one more compute API replica on the same database and NATS prefix (not behind the gateway). */
  startComputeReplica(overrides?: Record<string, string>): Promise<INestApplication>;
  stop(): Promise<void>;
}

/** The auth, data and webhooks services and the gateway, in-process, on a database and NATS prefix of this run's own. */
export async function startStack(overrides: Record<string, string> = {}, options: StackOptions = {}): Promise<Stack> {
  const clocks = options.clocks ?? {};
  const db: TestDatabase = await createTestDatabase();
  const [
    authPort,
    dataPort,
    webhooksPort,
    computePort,
    gatewayPort,
    inboundPort,
    orchestrationPort,
    workerPort,
    storagePort,
  ] = [
    await freePort(),
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
  const env = {
    ...process.env,
    DATABASE_URL: db.url,
    NATS_PREFIX: testNatsPrefix(),
    AUTH_PORT: String(authPort),
    AUTH_ISSUER: `${authUrl}/oidc`,
    AUTH_INTERNAL_URL: authUrl,
    STRATA_ADMIN_EMAIL: 'admin@example.test',
    STRATA_ADMIN_PASSWORD: 'correct horse battery',
    LOG_LEVEL: 'warn',
    PERMISSION_CACHE_TTL_MS: '1000',
    // The published development encryption key is accepted only when this is explicit.
    STRATA_ENV: 'development',
    ...overrides,
  };
  const own = options.env ?? {};
  /** The stack's settings with one service's own on top. */
  const envOf = (service: StackService) => ({ ...env, ...own[service] });
  const authConfig = loadConfig(AuthConfig, envOf('auth'));
  await migrateAuth(authConfig);
  let auth: INestApplication = await createAuthApp(authConfig, { clock: clocks.auth });
  await auth.listen(authPort, '127.0.0.1');
  const dataConfig = loadConfig(DataConfig, { ...envOf('data'), DATA_PORT: String(dataPort) });
  await migrateData(dataConfig);
  let data: INestApplication = await createDataApp(dataConfig, { clock: clocks.data });
  await data.listen(dataPort, '127.0.0.1');
  const webhooksConfig = loadConfig(WebhooksConfig, { ...envOf('webhooks'), WEBHOOKS_PORT: String(webhooksPort) });
  await migrateWebhooks(webhooksConfig);
  let webhooks: INestApplication | undefined = await createWebhooksApp(webhooksConfig, { clock: clocks.webhooks });
  await webhooks.listen(webhooksPort, '127.0.0.1');
  const computeEnv = {
    ...envOf('compute'),
    COMPUTE_PORT: String(computePort),
    DATA_SERVICE_URL: `http://127.0.0.1:${dataPort}`,
  };
  const computeConfig = loadConfig(ComputeConfig, computeEnv);
  await migrateCompute(computeConfig);
  let compute: INestApplication = await createComputeApp(computeConfig, { clock: clocks.compute });
  await compute.listen(computePort, '127.0.0.1');
  const inboundEnv = { ...envOf('inbound'), INBOUND_PORT: String(inboundPort) };
  await migrateInbound(loadConfig(InboundConfig, inboundEnv));
  let inbound: INestApplication | undefined = await createInboundApp(loadConfig(InboundConfig, inboundEnv), {
    clock: clocks.inbound,
  });
  await inbound.listen(inboundPort, '127.0.0.1');
  const orchestrationEnv = { ...envOf('orchestration'), ORCHESTRATION_PORT: String(orchestrationPort) };
  await migrateOrchestration(loadConfig(OrchestrationConfig, orchestrationEnv));
  let orchestration = await createOrchestrationApp(loadConfig(OrchestrationConfig, orchestrationEnv), {
    clock: clocks.orchestration,
  });
  await orchestration.listen(orchestrationPort, '127.0.0.1');
  const storageDir = await mkdtemp(path.join(tmpdir(), 'strata-storage-'));
  const storageConfig = loadConfig(StorageConfig, {
    STORAGE_LOCAL_DIR: storageDir,
    ...envOf('storage'),
    STORAGE_PORT: String(storagePort),
  });
  let storage: INestApplication | undefined;
  if (options.storage) {
    await migrateStorage(storageConfig);
    storage = await createStorageApp(storageConfig, { clock: clocks.storage });
    await storage.listen(storagePort, '127.0.0.1');
  }
  const workers = new Set<SpawnedWorker>();
  // The worker on the gateway's worker port, if one is running.
  let gatewayWorker: SpawnedWorker | undefined;
  const startWorker = async (extra: Record<string, string> = {}): Promise<WorkerProcess> => {
    const behindGateway = !gatewayWorker && extra['COMPUTE_WORKER_PORT'] === undefined;
    const worker = await spawnWorker({
      ...computeEnv,
      ...own['compute-worker'],
      COMPUTE_WORKER_PORT: behindGateway ? String(workerPort) : '0',
      ...extra,
    });
    workers.add(worker);
    if (behindGateway) gatewayWorker = worker;
    // A worker may end on its own (an isolate lost): its port is free for the next one.
    void worker.exited.then(() => {
      workers.delete(worker);
      if (gatewayWorker === worker) gatewayWorker = undefined;
    });
    return {
      pid: worker.pid,
      url: worker.url,
      exited: worker.exited,
      async stop(signal) {
        workers.delete(worker);
        await worker.stop(signal);
        if (gatewayWorker === worker) gatewayWorker = undefined;
      },
    };
  };
  for (let i = 0; i < (options.workers ?? 0); i++) await startWorker();
  const gatewayConfig = loadConfig(GatewayConfig, {
    ...envOf('gateway'),
    GATEWAY_PORT: String(gatewayPort),
    AUTH_SERVICE_URL: authUrl,
    DATA_SERVICE_URL: `http://127.0.0.1:${dataPort}`,
    WEBHOOKS_SERVICE_URL: `http://127.0.0.1:${webhooksPort}`,
    COMPUTE_SERVICE_URL: `http://127.0.0.1:${computePort}`,
    COMPUTE_WORKER_SERVICE_URL: `http://127.0.0.1:${workerPort}`,
    INBOUND_SERVICE_URL: `http://127.0.0.1:${inboundPort}`,
    ORCHESTRATION_SERVICE_URL: `http://127.0.0.1:${orchestrationPort}`,
    STORAGE_SERVICE_URL: `http://127.0.0.1:${storagePort}`,
  });
  const gateway: Server = await listen(
    createGateway(gatewayConfig),
    gatewayPort,
    '127.0.0.1',
    gatewayConfig.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  );
  return {
    authUrl,
    baseUrl: `http://127.0.0.1:${gatewayPort}`,
    dataUrl: `http://127.0.0.1:${dataPort}`,
    issuer: `${authUrl}/oidc`,
    adminEmail: authConfig.STRATA_ADMIN_EMAIL,
    adminPassword: authConfig.STRATA_ADMIN_PASSWORD,
    authConfig,
    databaseUrl: db.url,
    natsPrefix: env.NATS_PREFIX,
    computeUrl: `http://127.0.0.1:${computePort}`,
    workerUrl: `http://127.0.0.1:${workerPort}`,
    inboundUrl: `http://127.0.0.1:${inboundPort}`,
    storageUrl: `http://127.0.0.1:${storagePort}`,
    storageConfig,
    async startOrchestrationReplica(extra = {}) {
      const replicaPort = await freePort();
      const replica = await createOrchestrationApp(
        loadConfig(OrchestrationConfig, { ...orchestrationEnv, ...extra, ORCHESTRATION_PORT: String(replicaPort) }),
        { clock: clocks.orchestration },
      );
      await replica.listen(replicaPort, '127.0.0.1');
      return replica;
    },
    async restartOrchestration(extra = {}) {
      await orchestration.close();
      orchestration = await createOrchestrationApp(loadConfig(OrchestrationConfig, { ...orchestrationEnv, ...extra }), {
        clock: clocks.orchestration,
      });
      await orchestration.listen(orchestrationPort, '127.0.0.1');
    },
    async startInboundReplica(extra = {}) {
      const replicaPort = await freePort();
      const replica = await createInboundApp(
        loadConfig(InboundConfig, { ...inboundEnv, ...extra, INBOUND_PORT: String(replicaPort) }),
        { clock: clocks.inbound },
      );
      await replica.listen(replicaPort, '127.0.0.1');
      return replica;
    },
    async restartInbound(extra = {}) {
      await inbound?.close();
      inbound = undefined;
      inbound = await createInboundApp(loadConfig(InboundConfig, { ...inboundEnv, ...extra }), {
        clock: clocks.inbound,
      });
      await inbound.listen(inboundPort, '127.0.0.1');
    },
    startWorker,
    async startComputeReplica(extra = {}) {
      const replicaPort = await freePort();
      const replica = await createComputeApp(
        loadConfig(ComputeConfig, { ...computeEnv, ...extra, COMPUTE_PORT: String(replicaPort) }),
        { clock: clocks.compute },
      );
      await replica.listen(replicaPort, '127.0.0.1');
      return replica;
    },
    async restartCompute(extra = {}) {
      await compute.close();
      compute = await createComputeApp(loadConfig(ComputeConfig, { ...computeEnv, ...extra }), {
        clock: clocks.compute,
      });
      await compute.listen(computePort, '127.0.0.1');
    },
    async startDataReplica(extra = {}) {
      const replicaPort = await freePort();
      const replica = await createDataApp(
        loadConfig(DataConfig, { ...envOf('data'), ...extra, DATA_PORT: String(replicaPort) }),
        { clock: clocks.data },
      );
      await replica.listen(replicaPort, '127.0.0.1');
      return replica;
    },
    async stopWebhooks() {
      await webhooks?.close();
      webhooks = undefined;
    },
    async restartWebhooks(extra = {}) {
      await webhooks?.close();
      webhooks = undefined;
      const config = loadConfig(WebhooksConfig, {
        ...envOf('webhooks'),
        ...extra,
        WEBHOOKS_PORT: String(webhooksPort),
      });
      webhooks = await createWebhooksApp(config, { clock: clocks.webhooks });
      await webhooks.listen(webhooksPort, '127.0.0.1');
    },
    async startWebhooksReplica(extra = {}) {
      const replicaPort = await freePort();
      const config = loadConfig(WebhooksConfig, { ...envOf('webhooks'), ...extra, WEBHOOKS_PORT: String(replicaPort) });
      const replica = await createWebhooksApp(config, { clock: clocks.webhooks });
      await replica.listen(replicaPort, '127.0.0.1');
      return replica;
    },
    async createUser(email, password) {
      await auth.get(UsersService).create(email, password);
    },
    async restartAuth(extra = {}) {
      await auth.close();
      auth = await createAuthApp(
        Object.keys(extra).length ? loadConfig(AuthConfig, { ...envOf('auth'), ...extra }) : authConfig,
        { clock: clocks.auth },
      );
      await auth.listen(authPort, '127.0.0.1');
    },
    async restartData(extra = {}) {
      await data.close();
      data = await createDataApp(loadConfig(DataConfig, { ...envOf('data'), ...extra, DATA_PORT: String(dataPort) }), {
        clock: clocks.data,
      });
      await data.listen(dataPort, '127.0.0.1');
    },
    async stop() {
      await new Promise<void>((resolve) => {
        gateway.close(() => resolve());
        gateway.closeAllConnections();
      });
      await Promise.all([...workers].map((w) => w.stop()));
      await orchestration.close();
      await storage?.close();
      await rm(storageDir, { recursive: true, force: true });
      await inbound?.close();
      await compute.close();
      await webhooks?.close();
      await data.close();
      await auth.close();
      await db.drop();
    },
  };
}

/** JSON request helper returning status, headers and parsed body. */
export async function call(
  method: string,
  url: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(url, {
    method,
    headers: {
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined
      ? { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) }
      : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body };
}

/** Logs the administrator in, creates `workspace`, and returns a user token scoped to it. */
export async function adminWorkspaceToken(stack: Stack, workspace: string): Promise<string> {
  const first = await loginWithPassword({
    authUrl: stack.authUrl,
    email: stack.adminEmail,
    password: stack.adminPassword,
  });
  const created = await call('POST', `${stack.baseUrl}/workspace/api/v1/workspaces`, {
    token: first.accessToken,
    body: { slug: workspace, name: workspace },
  });
  if (created.status !== 201)
    throw new Error(`workspace ${workspace}: ${created.status} ${JSON.stringify(created.body)}`);
  const scoped = await loginWithPassword({
    authUrl: stack.authUrl,
    email: stack.adminEmail,
    password: stack.adminPassword,
    workspace,
  });
  return scoped.accessToken;
}

/**
 * A token of a new service account whose only permissions are those of one new
 * group with one policy (`resource` × `actions`, and any `morePolicies`), created
 * with an admin token.
 */
export async function serviceAccountToken(
  stack: Stack,
  workspace: string,
  adminToken: string,
  grant: {
    name: string;
    resource: string;
    actions: string[];
    /** The collections a `records` policy is scoped to (docs/identity.md); omitted for every one. */
    collections?: string[];
    scope?: string;
    morePolicies?: { resource: string; actions: string[]; collections?: string[] }[];
  },
): Promise<string> {
  const iam = `${stack.authUrl}/workspace/${workspace}/api/v1`;
  const expect201 = async (what: string, res: Promise<{ status: number; body: any }>) => {
    const done = await res;
    if (done.status !== 201) throw new Error(`${what}: ${done.status} ${JSON.stringify(done.body)}`);
    return done.body;
  };
  const group = await expect201(
    'group',
    call('POST', `${iam}/groups`, { token: adminToken, body: { name: grant.name } }),
  );
  const first = {
    resource: grant.resource,
    actions: grant.actions,
    ...(grant.collections ? { collections: grant.collections } : {}),
  };
  for (const policy of [first, ...(grant.morePolicies ?? [])]) {
    await expect201('policy', call('POST', `${iam}/groups/${group.id}/policies`, { token: adminToken, body: policy }));
  }
  const account = await expect201(
    'service account',
    call('POST', `${iam}/service-accounts`, {
      token: adminToken,
      body: { name: grant.name, ...(grant.scope ? { scope: grant.scope } : {}) },
    }),
  );
  await expect201(
    'member',
    call('POST', `${iam}/groups/${group.id}/members`, {
      token: adminToken,
      body: { type: 'service_account', id: account.clientId },
    }),
  );
  const issued = await fetch(`${stack.authUrl}/oidc/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: account.clientId,
      client_secret: account.clientSecret,
      ...(grant.scope ? { scope: grant.scope } : {}),
    }),
  });
  return ((await issued.json()) as { access_token: string }).access_token;
}

/** The built compute entry point (npm test builds before Jest runs). */
const COMPUTE_MAIN = path.resolve(import.meta.dirname, '../../apps/compute/dist/main.js');

interface SpawnedWorker {
  readonly pid: number;
  readonly url: string;
  stop(signal?: NodeJS.Signals): Promise<void>;
  readonly exited: Promise<WorkerExit>;
}

/** Spawns a worker process and waits until it serves everything (it logs "worker ready" with its port). */
async function spawnWorker(env: Record<string, string | undefined>): Promise<SpawnedWorker> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--no-node-snapshot', '--enable-source-maps', COMPUTE_MAIN, 'worker'],
    { env: { ...env, LOG_LEVEL: 'log' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<WorkerExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start in 60 s:\n${output}`)), 60_000);
    const look = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-20_000);
      const ready = /"worker ready"[^\n]*?"port":(\d+)/.exec(output);
      if (ready) {
        clearTimeout(timer);
        resolve(Number(ready[1]));
      }
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', look);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited (${code}) before it was ready:\n${output}`));
    });
  });
  // Keep draining its output so a full pipe never blocks it; STRATA_TEST_WORKER_LOG (a file) keeps it.
  const logFile = process.env['STRATA_TEST_WORKER_LOG'];
  const prefixed = (text: string) => text.replace(/^(?=.)/gm, `[worker ${child.pid}] `);
  const keep = logFile ? (chunk: Buffer) => appendFileSync(logFile, prefixed(chunk.toString())) : () => undefined;
  if (logFile) appendFileSync(logFile, prefixed(output));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return {
    pid: child.pid!,
    url: `http://127.0.0.1:${port}`,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
