import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { Histogram } from '@opentelemetry/sdk-metrics';
import { eventually } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';
import { collectMetrics } from './support/metrics.js';
import { Receivers } from './support/webhook-receiver.js';
import { WEBHOOK_TEST_SETTINGS, createSubscription, workspaceApi, type WorkspaceApi } from './support/webhooks.js';

// The services of the stack run in this process: their instruments are made with this provider.
const collected = collectMetrics();
const { points, counted } = collected;

let stack: Stack;
let api: WorkspaceApi;
const receivers = new Receivers();
const ws = `service-metrics-${Date.now().toString(36)}`;
let token: string;

beforeAll(async () => {
  // No orchestration engine: the runs of the orchestration test stay where it puts them.
  stack = await startStack({
    ...WEBHOOK_TEST_SETTINGS,
    ORCHESTRATION_ENGINE_ENABLED: 'false',
    // The retention test's row goes at the next pass.
    WEBHOOKS_RETENTION_SWEEP_INTERVAL_MS: '100',
  });
  token = await adminWorkspaceToken(stack, ws);
  api = workspaceApi(stack, ws, token);
});

afterAll(async () => {
  await receivers.stopAll();
  await stack?.stop();
  await collected.stop();
});

const attempts = (outcome: string) => counted('strata.webhooks.attempts', { outcome });

describe('webhook metrics', () => {
  it('counts attempts by outcome and times the ones sent, with none in flight after', async () => {
    const hook = await receivers.start();
    const sub = await createSubscription(api, { url: hook.url(), events: ['record_created'], recordSlugs: ['none'] });
    const ok = await api('POST', `/webhook-subscriptions/${sub.id}/test`, { event: 'record_created', payload: {} });
    expect(ok.body).toMatchObject({ status: 'success' });
    hook.reply = () => ({ status: 503 });
    const failed = await api('POST', `/webhook-subscriptions/${sub.id}/test`, { event: 'record_created', payload: {} });
    expect(failed.body).toMatchObject({ status: 'retrying', httpStatus: 503 });

    expect(await attempts('success')).toBe(1);
    expect(await attempts('failure')).toBe(1);
    const durations = await points('strata.webhooks.attempt.duration_seconds');
    expect(durations.map((p) => [p.attributes['outcome'], (p.value as Histogram).count]).sort()).toEqual([
      ['failure', 1],
      ['success', 1],
    ]);
    expect((await points('strata.webhooks.attempts.in_flight')).map((p) => p.value)).toEqual([0]);

    // An attempt whose receiver does not answer is in flight until the receiver goes away.
    hook.reply = () => 'hang';
    const hanging = api('POST', `/webhook-subscriptions/${sub.id}/test`, { event: 'record_created', payload: {} });
    await eventually(async () => {
      const inFlight = (await points('strata.webhooks.attempts.in_flight')).map((p) => p.value);
      return inFlight[0] === 1 ? true : undefined;
    }, 20_000);
    await hook.stop();
    expect((await hanging).body).toMatchObject({ status: 'retrying' });
    expect((await points('strata.webhooks.attempts.in_flight')).map((p) => p.value)).toEqual([0]);
    expect(await attempts('failure')).toBe(2);
    expect((await api('DELETE', `/webhook-subscriptions/${sub.id}`)).status).toBe(204);
  });
});

describe('inbound metrics', () => {
  it('counts arrivals by outcome and signature, and their dispatches by what compute answered', async () => {
    const base = `${stack.baseUrl}/data/workspace/${ws}/api/v1`;
    const fn = await call('POST', `${base}/compute-functions`, {
      token,
      body: { name: 'on-arrival', code: 'async function run() { return { success: true }; }' },
    });
    expect(fn.status).toBe(201);
    for (const [name, metadata] of [
      ['open-door', {}],
      ['signed-door', { validateSignature: true, signingSecret: 'door-secret' }],
    ] as const) {
      const created = await call('POST', `${base}/function-triggers`, {
        token,
        body: {
          name,
          functionId: fn.body.id,
          executionType: 'http-trigger',
          triggerMetadata: { path: name, ...metadata },
        },
      });
      expect(created.status).toBe(201);
    }
    const send = (path: string, headers: Record<string, string> = {}) =>
      call('POST', `${base}/http-trigger/${path}`, {
        body: '{"n":1}',
        headers: { 'content-type': 'application/json', ...headers },
      });
    expect((await send('open-door')).status).toBe(202);
    expect((await send('open-door')).status).toBe(202);
    expect((await send('signed-door', { 'x-signature': 'bad' })).status).toBe(401);
    expect((await send('no-door')).status).toBe(404);

    expect(await counted('strata.inbound.arrivals', { outcome: 'stored', signature: 'unsigned' })).toBe(2);
    expect(await counted('strata.inbound.arrivals', { outcome: 'refused', signature: 'rejected' })).toBe(1);
    expect(await counted('strata.inbound.arrivals', { outcome: 'not_found', signature: 'none' })).toBe(1);
    // Dispatched after the 202, in the background.
    await eventually(
      async () => ((await counted('strata.inbound.dispatches', { status: 'dispatched' })) === 2 ? true : undefined),
      20_000,
    );
  });
});

describe('orchestration metrics', () => {
  /** The gauge's value for `status` (0 is observed for a status with no run). */
  const gauge = async (name: string, status: string) =>
    (await points(name)).find((p) => p.attributes['status'] === status)?.value as number | undefined;

  it('reports the runs not ended by status, and those overdue', async () => {
    const obase = `${stack.baseUrl}/orchestration/ws/${ws}/api/v1`;
    const made = await call('POST', `${obase}/orchestrations`, {
      token,
      body: {
        slug: 'waits',
        name: 'Waits',
        status: 'active',
        trigger: { type: 'on-demand' },
        steps: [{ id: 'pause', type: 'delay', delayMs: 1000 }],
      },
    });
    expect(made.status).toBe(201);
    expect(await gauge('strata.orchestration.runs.open', 'pending')).toBe(0);
    const runs: string[] = [];
    for (const _ of [1, 2]) {
      const started = await call('POST', `${obase}/orchestrations/${made.body.id}/runs`, { token, body: {} });
      expect(started.body).toMatchObject({ status: 'pending' });
      runs.push(started.body.id as string);
    }
    expect(await gauge('strata.orchestration.runs.open', 'pending')).toBe(2);
    expect(await gauge('strata.orchestration.runs.open', 'running')).toBe(0);
    expect(await gauge('strata.orchestration.runs.overdue', 'pending')).toBe(0);
    // Due two minutes ago, set underneath the API: with no engine in this stack, nothing moves it.
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      await db.query(`UPDATE orchestration.runs SET due_at = now() - interval '2 minutes' WHERE id = $1`, [runs[0]]);
    } finally {
      await db.end();
    }
    expect(await gauge('strata.orchestration.runs.overdue', 'pending')).toBe(1);
    expect(await gauge('strata.orchestration.runs.open', 'pending')).toBe(2);

    // Ending a run counts it once, after its commit: a cancelled run apart from failed ones.
    const ended = (outcome: string) => counted('strata.orchestration.runs.ended', { outcome, trigger_type: 'manual' });
    expect(await ended('cancelled')).toBe(0);
    const cancel = () => call('POST', `${obase}/orchestrations/${made.body.id}/runs/${runs[1]}/cancel`, { token });
    expect((await cancel()).status).toBe(200);
    expect(await eventually(async () => ((await ended('cancelled')) === 1 ? true : undefined))).toBe(true);
    expect((await cancel()).status).toBe(409);
    expect(await ended('cancelled')).toBe(1);
    expect(await ended('failed')).toBe(0);
    expect(await gauge('strata.orchestration.runs.open', 'pending')).toBe(1);
  });
});

describe('retention metrics', () => {
  it('counts the rows a retention sweep deleted, by table', async () => {
    const hook = await receivers.start();
    const sub = await createSubscription(api, { url: hook.url(), events: ['record_created'], recordSlugs: ['none'] });
    const deleted = () => counted('strata.retention.deleted', { table: 'webhooks.idempotency_keys' });
    expect(await deleted()).toBe(0);
    // A key stored two days ago, set underneath the API: past WEBHOOKS_IDEMPOTENCY_WINDOW_HOURS.
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      await db.query(
        `INSERT INTO webhooks.idempotency_keys (workspace_slug, key, request_hash, subscription_id, created_at)
         VALUES ($1, 'old-key', 'h', $2, now() - interval '2 days')`,
        [ws, sub.id],
      );
    } finally {
      await db.end();
    }
    expect(await eventually(async () => ((await deleted()) === 1 ? true : undefined), 30_000)).toBe(true);
    // The table alone: no workspace, no key.
    const attributes = (await points('strata.retention.deleted')).map((p) => Object.keys(p.attributes));
    expect(attributes.every((keys) => keys.join() === 'table')).toBe(true);
  });
});

describe('request metrics', () => {
  /** Requests counted with `attributes` (the histogram's count). */
  const requests = async (attributes: Record<string, string>) =>
    (await points('strata.http.request.duration_seconds'))
      .filter((p) => Object.entries(attributes).every(([key, value]) => p.attributes[key] === value))
      .reduce((sum, p) => sum + (p.value as Histogram).count, 0);

  it('counts every request by service, method, route template and status, the gateway by the service it routed to', async () => {
    const base = `${stack.baseUrl}/data/workspace/${ws}/api/v1`;
    const record = {
      service: 'data',
      method: 'GET',
      route: '/data/workspace/:workspace/api/v1/records/:recordId',
      status: '404',
    };
    const routed = { service: 'gateway', method: 'GET', route: 'data', status: '404' };
    const unmatched = { service: 'data', method: 'GET', route: 'unmatched', status: '404' };
    const capture = { service: 'inbound', route: '/data/workspace/:workspace/api/v1/:entry/:path', status: '404' };
    const oidc = { service: 'auth', method: 'GET', route: '/oidc', status: '200' };
    const before = await Promise.all([record, routed, unmatched, capture, oidc].map(requests));

    for (let i = 0; i < 2; i++) {
      expect((await call('GET', `${base}/records/${randomUUID()}`, { token })).status).toBe(404);
    }
    expect((await call('GET', `${stack.dataUrl}/no/such/path`, { token })).status).toBe(404);
    // Served by the inbound service's direct route, ahead of Nest.
    expect((await call('POST', `${base}/http-trigger/nowhere`, { body: {} })).status).toBe(404);
    // The OIDC provider, mounted ahead of Nest's routes.
    expect((await call('GET', `${stack.authUrl}/oidc/.well-known/openid-configuration`)).status).toBe(200);

    // Counted when the answer has ended, which may be a moment after the client read it.
    await eventually(async () => {
      const after = await Promise.all([record, routed, unmatched, capture, oidc].map(requests));
      return after.every((n, i) => n === before[i]! + [2, 2, 1, 1, 1][i]!) ? true : undefined;
    }, 10_000);
    // The path's ids and workspace are never an attribute.
    const attributes = (await points('strata.http.request.duration_seconds')).map((p) => JSON.stringify(p.attributes));
    expect(attributes.filter((a) => a.includes(ws))).toEqual([]);
  });
});
