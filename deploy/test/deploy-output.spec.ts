import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, eventually, freePort, testNatsPrefix, type TestDatabase } from '@strata/testing';
import { CREDENTIALS, ROOT, containerEnv, find, render } from './chart.js';

/**
 * What deploy/Dockerfile puts in each image, run as the chart runs it: `pnpm --filter
 * @strata/<app> deploy --prod` (the image's /app), then each schema's migration with the
 * environment of the chart's migrations Job, and every service and a sandbox worker with the
 * environment of its Deployment's pod, in production mode, then the post-install Job's
 * upgrade steps. Only what a test machine cannot
 * have is changed: hosts and ports, the database and the NATS prefix. A dependency only the
 * monorepo's node_modules had, a setting the chart forgets or a credential the services would
 * refuse fails here rather than in a cluster.
 */
const APPS = ['auth', 'data', 'webhooks', 'compute', 'inbound', 'orchestration', 'storage', 'gateway'] as const;
type Process = (typeof APPS)[number] | 'compute-worker';

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

/** A process of a deployed app with the container's arguments, its working directory the image's /app. */
function run(folder: string, args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, args, {
    cwd: join(out, folder),
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

describe("the images' contents, run as the chart runs them", () => {
  it('hold each package built, without its sources, tests or build settings', () => {
    for (const app of APPS) {
      const strata = join(out, app, 'node_modules', '@strata');
      const packages = [join(out, app), ...readdirSync(strata).map((lib) => join(strata, lib))];
      for (const folder of packages) {
        expect(existsSync(join(folder, 'dist'))).toBe(true);
        const extra = ['src', 'test', 'tsconfig.json', 'tsconfig.build.json'].filter((f) =>
          existsSync(join(folder, f)),
        );
        expect({ folder, extra }).toEqual({ folder, extra: [] });
      }
    }
  });

  it('migrate every schema and serve every service in production mode, the gateway routing to them', async () => {
    db = await createTestDatabase('strata_deploy');
    const objects = render(CREDENTIALS);
    const ports = Object.fromEntries(
      await Promise.all([...APPS, 'compute-worker'].map(async (app) => [app, await freePort()] as const)),
    ) as Record<Process, number>;
    const local = (app: Process) => `http://127.0.0.1:${ports[app]}`;
    /** The chart's environment with this machine's hosts, ports, database and NATS prefix. */
    const here = (env: Record<string, string>): Record<string, string> => {
      const moved = Object.fromEntries(
        Object.entries(env).map(([name, value]) => [
          name,
          value.replace(/^http:\/\/strata-([a-z-]+):\d+$/, (_, app: Process) => local(app)),
        ]),
      );
      return {
        ...moved,
        HOST: '127.0.0.1',
        DATABASE_URL: db.url,
        NATS_URL: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222',
        NATS_PREFIX: testNatsPrefix(),
        // Eight processes on one machine would want one port: no metrics here (the e2e tests cover them).
        METRICS_PORT: '',
        LOG_LEVEL: 'warn',
        // The storage pod's volume: a directory of this run.
        ...(env['STORAGE_LOCAL_DIR'] ? { STORAGE_LOCAL_DIR: join(out, 'storage-files') } : {}),
      };
    };

    const job = find(objects, 'Job', 'strata-migrate').spec.template.spec;
    for (const c of job.initContainers) {
      const app = (c.name as string).replace(/^migrate-/, '');
      const env = here(containerEnv(objects, c));
      expect(env['STRATA_ENV']).toBe('production');
      const migrated = await exited(run(app, c.args, env));
      expect({ app, code: migrated.code, output: migrated.code === 0 ? '' : migrated.output }).toEqual({
        app,
        code: 0,
        output: '',
      });
    }

    for (const app of [...APPS, 'compute-worker'] as const) {
      const c = find(objects, 'Deployment', `strata-${app}`).spec.template.spec.containers[0];
      const env = here(containerEnv(objects, c));
      // The container's own port setting, moved to this machine's free port.
      const portSetting = Object.keys(env).find(
        (name) => name.endsWith('_PORT') && env[name] === String(c.ports[0].containerPort),
      );
      expect(portSetting).toBeDefined();
      env[portSetting!] = String(ports[app]);
      const child = run(app === 'compute-worker' ? 'compute' : app, c.args, env);
      child.stdout!.resume();
      child.stderr!.resume();
      children.push(child);
    }
    for (const app of [...APPS, 'compute-worker'] as const) {
      const path = app === 'gateway' ? '/healthz' : '/readyz';
      await eventually(
        async () => ((await fetch(`${local(app)}${path}`).catch(() => undefined))?.ok ? true : undefined),
        60_000,
      );
    }
    // Through the gateway to data: no token, the data service's own 401.
    const routed = await fetch(`${local('gateway')}/data/workspace/acme/api/v1/structures`);
    expect(routed.status).toBe(401);
    expect(routed.headers.get('x-request-id')).toBeTruthy();

    // The release runs: the post-install Job's upgrade steps, each with its service's environment.
    const upgrade = find(objects, 'Job', 'strata-upgrade').spec.template.spec;
    for (const c of upgrade.initContainers) {
      const app = (c.name as string).replace(/^upgrade-/, '');
      const upgraded = await exited(run(app, c.args, here(containerEnv(objects, c))));
      expect({ app, code: upgraded.code, done: upgraded.output.includes('reseal-purpose-bindings: done') }).toEqual({
        app,
        code: 0,
        done: true,
      });
    }
  }, 180_000);
});
