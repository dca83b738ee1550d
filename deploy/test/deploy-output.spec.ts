import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, eventually, freePort, testNatsPrefix, type TestDatabase } from '@strata/testing';
import { ROOT } from './chart.js';

/**
 * What deploy/Dockerfile puts in each image, run: `pnpm --filter @strata/<app> deploy
 * --prod` (the image's /app), then each schema's migrations and every service from those
 * folders alone, as the chart runs them. A dependency only the monorepo's node_modules
 * had, or a file the build leaves out, fails here rather than in a cluster.
 */
const APPS = ['auth', 'data', 'webhooks', 'compute', 'inbound', 'orchestration', 'gateway'] as const;
const MIGRATING = APPS.filter((app) => app !== 'gateway');

let out: string;
let db: TestDatabase;
const children: ChildProcess[] = [];

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'strata-deploy-'));
  for (const app of APPS) {
    execFileSync('pnpm', ['--filter', `@strata/${app}`, 'deploy', '--prod', join(out, app)], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  }
}, 240_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(
    children
      .filter((child) => child.exitCode === null)
      .map((child) => new Promise((resolve) => child.once('exit', resolve))),
  );
  await db?.drop();
  rmSync(out, { recursive: true, force: true });
});

/** A process of a deployed app, its working directory the app's folder (the image's /app). */
function run(app: string, args: string[], env: Record<string, string>): ChildProcess {
  const nodeArgs = ['--enable-source-maps', ...(app === 'compute' ? ['--no-node-snapshot'] : []), 'dist/main.js'];
  return spawn(process.execPath, [...nodeArgs, ...args], {
    cwd: join(out, app),
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function exited(child: ChildProcess): Promise<{ code: number | null; output: string }> {
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output };
}

describe("the images' contents (pnpm deploy --prod)", () => {
  it('migrate every schema and serve every service, the gateway routing to them', async () => {
    db = await createTestDatabase('strata_deploy');
    const ports = Object.fromEntries(
      await Promise.all([...APPS, 'compute-worker'].map(async (app) => [app, await freePort()] as const)),
    ) as Record<(typeof APPS)[number] | 'compute-worker', number>;
    const url = (app: keyof typeof ports) => `http://127.0.0.1:${ports[app]}`;
    const env: Record<string, string> = {
      STRATA_ENV: 'development',
      DATABASE_URL: db.url,
      NATS_URL: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222',
      NATS_PREFIX: testNatsPrefix(),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      AUTH_ISSUER: `${url('auth')}/oidc`,
      AUTH_INTERNAL_URL: url('auth'),
      DATA_SERVICE_URL: url('data'),
      AUTH_PORT: String(ports.auth),
      DATA_PORT: String(ports.data),
      WEBHOOKS_PORT: String(ports.webhooks),
      COMPUTE_PORT: String(ports.compute),
      COMPUTE_WORKER_PORT: String(ports['compute-worker']),
      INBOUND_PORT: String(ports.inbound),
      ORCHESTRATION_PORT: String(ports.orchestration),
      GATEWAY_PORT: String(ports.gateway),
      AUTH_SERVICE_URL: url('auth'),
      COMPUTE_SERVICE_URL: url('compute'),
      COMPUTE_WORKER_SERVICE_URL: url('compute-worker'),
      INBOUND_SERVICE_URL: url('inbound'),
      ORCHESTRATION_SERVICE_URL: url('orchestration'),
      WEBHOOKS_SERVICE_URL: url('webhooks'),
    };
    for (const app of MIGRATING) {
      const migrated = await exited(run(app, ['migrate'], env));
      expect({ app, code: migrated.code, output: migrated.code === 0 ? '' : migrated.output }).toEqual({
        app,
        code: 0,
        output: '',
      });
    }

    for (const app of APPS) children.push(run(app, [], env));
    children.push(run('compute', ['worker'], { ...env, COMPUTE_WORKER_ISOLATES: '1' }));
    for (const child of children) {
      child.stdout!.resume();
      child.stderr!.resume();
    }
    for (const app of [...APPS, 'compute-worker'] as const) {
      const path = app === 'gateway' ? '/healthz' : '/readyz';
      await eventually(
        async () => ((await fetch(`${url(app)}${path}`).catch(() => undefined))?.ok ? true : undefined),
        60_000,
      );
    }
    // Through the gateway to data: no token, the data service's own 401.
    const routed = await fetch(`${url('gateway')}/data/workspace/acme/api/v1/structures`);
    expect(routed.status).toBe(401);
    expect(routed.headers.get('x-request-id')).toBeTruthy();
  }, 180_000);
});
