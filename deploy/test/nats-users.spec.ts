import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, nkeys, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { loadConfig, NatsConnectionHolder, ServiceConfig } from '@strata/platform';
import { createStrataClient } from '@strata/sdk';
import { eventually, testNatsPrefix } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack, type StackService } from '@strata/testkit';
import { CREDENTIALS, ROOT, containerEnv, find, render, type K8sObject } from './chart.js';
import { startNatsServer, type NatsServer } from './nats-server.js';

/**
 * The chart's NATS users (templates/_nats.tpl) against a real NATS server started with the
 * `authorization` block the chart renders, and the real services started with the NATS
 * settings the chart gives their pods: every service does its work with its own user and
 * no permission it lacks, and each is refused what is another's.
 */

/** The apps that connect to NATS, each with a user of its own. */
const APPS = ['auth', 'data', 'webhooks', 'compute', 'compute-worker', 'inbound', 'orchestration', 'storage'] as const;
type App = (typeof APPS)[number];

const prefix = testNatsPrefix();
// Letters and digits, starting with a letter: what the chart takes (the server parses them from its environment).
const passwords = Object.fromEntries(APPS.map((app) => [app, `p${randomBytes(16).toString('hex')}`])) as Record<
  App,
  string
>;

/** What a pod of the app gets to reach NATS with: the chart's NATS_* settings, the Secret's values resolved. */
function natsEnvOf(objects: K8sObject[], app: App): Record<string, string> {
  const env = containerEnv(objects, find(objects, 'Deployment', `strata-${app}`).spec.template.spec.containers[0]);
  return Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith('NATS_') && name !== 'NATS_URL'));
}

/** The Secret's NATS_PASSWORD_<APP> values: the server reads the passwords auth.conf names from its environment. */
function serverEnvOf(objects: K8sObject[]): Record<string, string> {
  const data = find(objects, 'Secret', 'strata-secrets').stringData!;
  return Object.fromEntries(Object.entries(data).filter(([name]) => name.startsWith('NATS_PASSWORD_')));
}

/** Permission refusals (and failed logins) the server logged. */
const violations = (server: NatsServer) =>
  server
    .log()
    .split('\n')
    .filter((line) => /Violation/.test(line));

describe("the chart's NATS users (nats.auth.mode password)", () => {
  const objects = render({
    ...CREDENTIALS,
    nats: { prefix, auth: { mode: 'password' } },
    secrets: { ...CREDENTIALS.secrets, natsPasswords: passwords },
  });
  let server: NatsServer;
  let stack: Stack;
  let receiver: Server;
  const arrivals: unknown[] = [];
  const ws = `natsu-${Date.now().toString(36)}`;

  /** A connection as one service's user (its password, its own inbox), for the refusals. */
  const as = (app: App, options: Partial<ConnectionOptions> = {}) =>
    connect({
      servers: server.url,
      user: `strata-${app}`,
      pass: passwords[app],
      inboxPrefix: `_INBOX.strata-${app}`,
      ...options,
    });

  beforeAll(async () => {
    const authConf = find(objects, 'ConfigMap', 'strata-nats-auth').data!['auth.conf']!;
    server = await startNatsServer(authConf, serverEnvOf(objects));
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        arrivals.push(JSON.parse(body));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const env = Object.fromEntries(APPS.map((app) => [app, natsEnvOf(objects, app)])) as Record<
      StackService,
      Record<string, string>
    >;
    stack = await startStack(
      {
        NATS_URL: server.url,
        // The chart's prefix: the permissions name its streams, subjects and buckets.
        NATS_PREFIX: find(objects, 'ConfigMap', 'strata-env').data!['NATS_PREFIX']!,
        WEBHOOKS_ALLOW_PRIVATE_RECEIVERS: 'true',
        WEBHOOKS_DISPATCH_INTERVAL_MS: '100',
        DATA_OUTBOX_INTERVAL_MS: '50',
        ORCHESTRATION_POLL_MS: '25',
        ORCHESTRATION_ENGINE_INTERVAL_MS: '25',
        TEMPORAL_ADDRESS: '',
      },
      { env, storage: true },
    );
    await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
  });

  afterAll(async () => {
    await stack?.stop();
    await new Promise((resolve) => receiver?.close(resolve));
    await server?.stop();
  });

  it('gives each service its own user, password and inbox, and the server their users', () => {
    for (const app of APPS) {
      expect(natsEnvOf(objects, app)).toEqual({
        NATS_PREFIX: prefix,
        NATS_USER: `strata-${app}`,
        NATS_PASSWORD: passwords[app],
        NATS_INBOX_PREFIX: `_INBOX.strata-${app}`,
      });
    }
    expect(natsEnvOf(objects, 'gateway' as App)).toEqual({ NATS_PREFIX: prefix });
    const authConf = find(objects, 'ConfigMap', 'strata-nats-auth').data!['auth.conf']!;
    // No password is in the ConfigMap: the server reads them from its environment.
    for (const password of Object.values(passwords)) expect(authConf).not.toContain(password);
    expect(authConf).toContain('password: $NATS_PASSWORD_COMPUTE_WORKER');
  });

  it('lets every service do its work: records, events, webhooks, runs, endpoints, arrivals, orchestrations, files', async () => {
    const token = await adminWorkspaceToken(stack, ws);
    const base = `${stack.baseUrl}/data/workspace/${ws}/api/v1`;
    const api = async (method: string, path: string, body?: unknown, expected = [200, 201]) => {
      const res = await call(method, `${base}${path}`, { token, ...(body !== undefined ? { body } : {}) });
      if (!expected.includes(res.status))
        throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const collection = await api('POST', '/structures', {
      name: 'Orders',
      recordSlug: 'orders',
      properties: [{ name: 'total', type: 'number' }],
    });
    await api('POST', '/webhook-subscriptions', {
      name: 'hook',
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      events: ['record_created'],
    });
    const background = await api('POST', '/compute-functions', {
      name: 'echo',
      code: 'async function run() { return { success: true, data: executionParams }; }',
    });
    const page = await api('POST', '/compute-functions', {
      name: 'page',
      code: 'export default async (context) => ({ hello: context.req.payload?.name ?? null });',
    });
    const trigger = (name: string, functionId: string, executionType: string, triggerMetadata: object) =>
      api('POST', '/function-triggers', { name, functionId, executionType, triggerMetadata });
    const onEvent = await trigger('on-order', background.id, 'event-driven', {
      event: 'record_created',
      recordSlug: 'orders',
    });
    const onDemand = await trigger('by-hand', background.id, 'on-demand', {});
    await trigger('hook-in', background.id, 'http-trigger', { path: 'hook-in' });
    await trigger('open', page.id, 'endpoint', { path: 'open', auth: { mode: 'public' } });
    const signed = await trigger('signed', page.id, 'endpoint', { path: 'signed', auth: { mode: 'hmac' } });

    // A record: the outbox relay publishes its event (data); webhooks delivers it; the
    // event-driven trigger runs (the worker's consumer, or an offer and the job queue).
    const record = await api('POST', '/records', { structureId: collection.id, data: { total: 5 } });
    await eventually(() => (arrivals.length > 0 ? true : undefined), 30_000);
    const runsOf = async (triggerId: string) =>
      (await api('GET', `/function-runs?triggerId=${triggerId}`)).runs as { status: string; id: string }[];
    const succeeded = (triggerId: string) =>
      eventually(async () => {
        const runs = await runsOf(triggerId);
        return runs.some((r) => r.status === 'succeeded') ? runs : undefined;
      }, 30_000);
    await succeeded(onEvent.id);
    // An on-demand run: the compute API queues its job, a worker takes it.
    await api('POST', `/function-triggers/${onDemand.id}/execute`, { n: 1 });
    await succeeded(onDemand.id);
    // An arrival: inbound asks compute over request/reply, which queues the run.
    const arrival = await call('POST', `${base}/http-trigger/hook-in`, { body: { n: 2 } });
    expect(arrival.status).toBe(202);
    await eventually(async () => {
      const listed = await api('GET', `/function-runs?jobId=${arrival.body.executionId}`);
      return listed.runs?.[0]?.status === 'succeeded' ? true : undefined;
    }, 30_000);
    // Endpoints: served by the worker behind the gateway, handed to a worker over NATS by the
    // compute API, and signed (each signature kept in a key-value bucket).
    expect((await call('POST', `${base}/endpoints/open`, { body: { name: 'ada' } })).body).toEqual({ hello: 'ada' });
    const direct = await call('POST', `${stack.computeUrl}/data/workspace/${ws}/api/v1/endpoints/open`, {
      body: { name: 'bob' },
    });
    expect(direct.body).toEqual({ hello: 'bob' });
    const client = createStrataClient({ baseUrl: stack.baseUrl, authUrl: stack.authUrl, workspace: ws, auth: token });
    const signedCall = await client.endpoints.invoke('signed', {
      body: { name: 'grace' },
      auth: { signingSecret: signed.issuedCredentials.signingSecret },
    });
    expect(signedCall.body).toEqual({ hello: 'grace' });
    // An orchestration: its compute step asks compute to start a run and hears when it ended.
    const orchBase = `${stack.baseUrl}/orchestration/ws/${ws}/api/v1`;
    const made = await call('POST', `${orchBase}/orchestrations`, {
      token,
      body: {
        slug: 'checkout',
        name: 'checkout',
        status: 'active',
        trigger: { type: 'on-demand' },
        steps: [{ id: 'charge', type: 'compute', functionId: background.id }],
      },
    });
    expect(made.status).toBe(201);
    const started = await call('POST', `${orchBase}/orchestrations/${made.body.id}/runs`, { token, body: {} });
    expect(started.status).toBe(201);
    const ended = await eventually(async () => {
      const r = await call('GET', `${orchBase}/orchestrations/${made.body.id}/runs/${started.body.id}`, { token });
      return ['completed', 'failed'].includes(r.body.status) ? r.body : undefined;
    }, 45_000);
    expect(ended.status).toBe('completed');
    expect(record.id).toEqual(expect.any(String));

    // The operator's command, in a compute container with its environment: list and lift suspensions.
    const suspensions = (...args: string[]) =>
      promisify(execFile)(
        process.execPath,
        ['--no-node-snapshot', join(ROOT, 'apps/compute/dist/main.js'), 'suspensions', ...args],
        {
          env: {
            PATH: process.env['PATH'] ?? '',
            STRATA_ENV: 'development',
            LOG_LEVEL: 'warn',
            DATABASE_URL: stack.databaseUrl,
            NATS_URL: server.url,
            ...natsEnvOf(objects, 'compute'),
          },
        },
      );
    expect((await suspensions()).stdout).toBe('');
    expect((await suspensions('lift', ws)).stdout).toBe(`strata-compute: ${ws} has no lost isolates on record\n`);

    // A file stored and read back: the storage service counts both in the shared rate-limit bucket.
    const storage = `${stack.baseUrl}/storage/workspace/${ws}/api/v1`;
    const form = new FormData();
    form.append('file', new Blob(['hello']), 'hello.txt');
    const uploaded = await fetch(`${storage}/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    expect(uploaded.status).toBe(201);
    const { id } = (await uploaded.json()) as { id: string };
    const read = await fetch(`${storage}/files/${id}?alt=media`, { headers: { authorization: `Bearer ${token}` } });
    expect(await read.text()).toBe('hello');

    // Every service worked within its permissions: the server refused nothing.
    expect(violations(server)).toEqual([]);
  });

  it("refuses each service what is another's", async () => {
    const refusals: [App, string, (nc: NatsConnection) => Promise<unknown>][] = [
      // Only the data service writes record events.
      [
        'webhooks',
        'publish a record event',
        (nc) => jetstream(nc).publish(`${prefix}.records.${ws}.orders.record_created`, '{}'),
      ],
      [
        'compute',
        'publish a record event',
        (nc) => jetstream(nc).publish(`${prefix}.records.${ws}.orders.record_deleted`, '{}'),
      ],
      // A consumer reads the events through its own durable only.
      [
        'compute',
        "read the records stream's messages",
        async (nc) => (await jetstreamManager(nc)).streams.getMessage(`${prefix}_records`, { seq: 1 }),
      ],
      [
        'orchestration',
        "take over webhooks' consumer",
        async (nc) => (await jetstreamManager(nc)).consumers.info(`${prefix}_records`, `${prefix}_webhooks`),
      ],
      [
        'orchestration',
        "take over webhooks' routed consumer",
        async (nc) =>
          (await jetstreamManager(nc)).consumers.info(`${prefix}_routed_records`, `${prefix}_routed_webhooks`),
      ],
      [
        'webhooks',
        'publish a routed event',
        (nc) => jetstream(nc).publish(`${prefix}.routed.compute.${ws}.orders.record_created`, '{}'),
      ],
      [
        'compute',
        "replace webhooks' event interests",
        async (nc) =>
          nc.request(`${prefix}.data.event-interests.webhooks.replace`, '{"consumer":"webhooks","interests":[]}', {
            timeout: 2000,
          }),
      ],
      [
        'webhooks',
        'reshape the records stream',
        async (nc) => (await jetstreamManager(nc)).streams.update(`${prefix}_records`, { max_age: 1e9 }),
      ],
      [
        'webhooks',
        'delete the records stream',
        async (nc) => (await jetstreamManager(nc)).streams.delete(`${prefix}_records`),
      ],
      ['data', 'list the streams', async (nc) => (await jetstreamManager(nc)).streams.names().next()],
      // The compute job queue is compute's.
      ['inbound', 'queue a compute job', (nc) => jetstream(nc).publish(`${prefix}.compute.jobs.${ws}`, '{}')],
      [
        'orchestration',
        "take the workers' jobs",
        async (nc) =>
          (await jetstreamManager(nc)).consumers.info(`${prefix}_compute_jobs`, `${prefix}_compute_workers`),
      ],
      // Key-value buckets: compute's suspensions and signatures are compute's.
      [
        'orchestration',
        "read compute's suspensions",
        async (nc) => (await jetstreamManager(nc)).streams.info(`KV_${prefix}_compute_suspensions`),
      ],
      [
        'webhooks',
        "write compute's endpoint signatures",
        (nc) => jetstream(nc).publish(`$KV.${prefix}_compute_endpoint_signatures.x`, ''),
      ],
      // Answering a service's requests is that service's (a worker may not answer for the compute API).
      [
        'compute-worker',
        'ask for trigger settings as inbound does',
        (nc) => nc.request(`${prefix}.compute.http-triggers.resolve`, '{}', { timeout: 2000 }),
      ],
      [
        'inbound',
        'start a function run as orchestration does',
        (nc) => nc.request(`${prefix}.compute.functions.run`, '{}', { timeout: 2000 }),
      ],
    ];
    for (const [app, what, attempt] of refusals) {
      const nc = await as(app);
      try {
        const outcome = await attempt(nc).then(
          () => 'allowed',
          (err: Error) => String(err.message),
        );
        expect([app, what, outcome]).toEqual([app, what, expect.stringContaining('Permissions Violation for Publish')]);
      } finally {
        await nc.close();
      }
    }

    // Subscriptions: everything, every reply, another service's replies, another service's requests.
    const subscriptions: [App, string][] = [
      ['compute', '>'],
      ['data', '_INBOX.>'],
      ['webhooks', '_INBOX.strata-auth.>'],
      ['compute-worker', `${prefix}.compute.http-triggers.resolve`],
      ['orchestration', `${prefix}.records.>`],
      ['inbound', `${prefix}.compute.endpoints`],
    ];
    for (const [app, subject] of subscriptions) {
      const nc = await as(app);
      try {
        const closed = await nc.subscribe(subject).closed;
        expect([app, subject, String(closed)]).toEqual([
          app,
          subject,
          expect.stringContaining('Permissions Violation for Subscription'),
        ]);
      } finally {
        await nc.close();
      }
    }

    // Without a password, with another's, or with a wrong one, nobody gets in.
    for (const options of [{ user: undefined, pass: undefined }, { pass: passwords.compute }, { pass: 'wrong' }]) {
      await expect(as('webhooks', options)).rejects.toThrow('Authorization Violation');
    }
    // The server's log names each refusal (what the test above finds none of), with the user.
    expect(violations(server)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /Publish Violation - User "strata-webhooks", Subject "\S+\.records\.\S+\.record_created"/,
        ),
        expect.stringMatching(/Subscription Violation - User "strata-compute", Subject ">"/),
      ]),
    );
  });
});

describe("the chart's NATS users (nats.auth.mode nkey)", () => {
  const keys = Object.fromEntries(APPS.map((app) => [app, nkeys.createUser()])) as Record<App, nkeys.KeyPair>;
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  const objects = render({
    ...CREDENTIALS,
    nats: {
      prefix,
      auth: { mode: 'nkey', nkeys: Object.fromEntries(APPS.map((app) => [app, keys[app].getPublicKey()])) },
    },
    secrets: {
      ...CREDENTIALS.secrets,
      natsNkeySeeds: Object.fromEntries(APPS.map((app) => [app, text(keys[app].getSeed())])),
    },
  });
  let server: NatsServer;

  beforeAll(async () => {
    server = await startNatsServer(find(objects, 'ConfigMap', 'strata-nats-auth').data!['auth.conf']!, {});
  });

  afterAll(async () => {
    await server?.stop();
  });

  it("signs each service in with its seed, to its own permissions, through the services' own connection", async () => {
    expect(natsEnvOf(objects, 'data')).toEqual({
      NATS_PREFIX: prefix,
      NATS_NKEY_SEED: text(keys.data.getSeed()),
      NATS_INBOX_PREFIX: '_INBOX.strata-data',
    });
    const holder = (app: App) =>
      new NatsConnectionHolder(
        loadConfig(ServiceConfig, { STRATA_ENV: 'development', NATS_URL: server.url, ...natsEnvOf(objects, app) }),
      );
    const data = holder('data');
    const webhooks = holder('webhooks');
    try {
      // The data service makes its stream and publishes an event; webhooks may not.
      const dataNc = await data.get();
      await (
        await jetstreamManager(dataNc)
      ).streams.add({ name: `${prefix}_records`, subjects: [`${prefix}.records.>`] });
      expect((await jetstream(dataNc).publish(`${prefix}.records.w.c.record_created`, '{}')).seq).toBe(1);
      const refused = await jetstream(await webhooks.get())
        .publish(`${prefix}.records.w.c.record_created`, '{}')
        .catch((err: Error) => err.message);
      expect(refused).toContain('Permissions Violation for Publish');
      // A seed that is not the one the server knows for a user is nobody's.
      const stranger = new NatsConnectionHolder(
        loadConfig(ServiceConfig, {
          STRATA_ENV: 'development',
          NATS_URL: server.url,
          NATS_NKEY_SEED: text(nkeys.createUser().getSeed()),
        }),
      );
      await expect(stranger.get()).rejects.toThrow('Authorization Violation');
    } finally {
      await data.onApplicationShutdown();
      await webhooks.onApplicationShutdown();
    }
  });
});
