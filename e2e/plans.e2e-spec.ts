import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { loginWithPassword } from '@strata/sdk';
import { eventually, ManualClock } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

/**
 * Workspace plans and quotas (docs/plans.md) through the gateway: a platform
 * administrator makes a small plan and gives it to a workspace, which is then
 * filled to each limit; the next create gets the spec's error with the limit
 * and the usage; deleting frees a slot; the usage page shows the numbers; the
 * counters are reconciled with the records.
 */
let stack: Stack;
const run = Date.now().toString(36);
const ws = `plans-${run}`;
let admin: string;
/** The compute service's clock: a minute before a month ends, so the test can cross into the next. */
const computeClock = new ManualClock(Date.parse('2026-06-30T23:59:00.000Z'));

beforeAll(async () => {
  // The reconciliation runs often here, so that its repair shows within the test.
  stack = await startStack({ DATA_USAGE_RECONCILE_INTERVAL_MS: '300' }, { clocks: { compute: computeClock } });
  admin = await adminWorkspaceToken(stack, ws);
});

afterAll(async () => {
  await stack?.stop();
});

const platform = (method: string, path: string, body?: unknown, token = admin) =>
  call(method, `${stack.baseUrl}/workspace/api/v1${path}`, { token, ...(body !== undefined ? { body } : {}) });
const data = (method: string, path: string, body?: unknown, token = admin) =>
  call(method, `${stack.baseUrl}/data/workspace/${ws}/api/v1${path}`, {
    token,
    ...(body !== undefined ? { body } : {}),
  });
const iam = (method: string, path: string, body?: unknown, token = admin) =>
  call(method, `${stack.authUrl}/workspace/${ws}/api/v1${path}`, { token, ...(body !== undefined ? { body } : {}) });
const usage = async () => (await platform('GET', `/workspaces/${ws}/usage`)).body;

describe('plans', () => {
  it('has a default plan with generous limits, every workspace on it', async () => {
    const plans = await platform('GET', '/plans');
    expect(plans.status).toBe(200);
    const byName = new Map((plans.body.data as { name: string }[]).map((p) => [p.name, p]));
    expect(byName.get('default')).toMatchObject({
      name: 'default',
      limits: { records: 10_000_000, functions: 1000, serviceAccounts: 200 },
      features: { endpoints: true, inboundCapture: true, temporal: true },
    });
    const page = await usage();
    expect(page).toMatchObject({
      workspace: ws,
      plan: 'default',
      resources: { records: { limit: 10_000_000, usage: 0 }, serviceAccounts: { limit: 200, usage: 0 } },
      features: { endpoints: true, inboundCapture: true, temporal: true },
    });
  });

  it('is created, read, changed and deleted by a platform administrator; bad input is a 400 per field', async () => {
    const created = await platform('POST', '/plans', {
      name: `tmp-${run}`,
      description: 'temporary',
      limits: { records: 5, functions: null },
      features: { temporal: false },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: `tmp-${run}`,
      limits: { records: 5, functions: null, triggers: null, storageBytes: null },
      features: { endpoints: true, inboundCapture: true, temporal: false },
    });
    expect((await platform('POST', '/plans', { name: `tmp-${run}` })).status).toBe(409);
    const changed = await platform('PUT', `/plans/tmp-${run}`, { limits: { triggers: 7 } });
    expect(changed.status).toBe(200);
    expect(changed.body.limits).toMatchObject({ records: 5, triggers: 7 });
    expect((await platform('GET', `/plans/tmp-${run}`)).body.limits.triggers).toBe(7);

    const bad = await platform('POST', '/plans', { name: 'Bad Name', limits: { records: -1, bogus: 3 } });
    expect(bad.status).toBe(400);
    const fields = (bad.body.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual(expect.arrayContaining(['name', 'limits.records', 'limits.bogus']));

    expect((await platform('DELETE', '/plans/default')).status).toBe(409);
    expect((await platform('DELETE', `/plans/tmp-${run}`)).status).toBe(204);
    expect((await platform('GET', `/plans/tmp-${run}`)).status).toBe(404);
  });

  it('cannot be read or changed by a user who is not a platform administrator', async () => {
    const email = `member-${run}@example.test`;
    await stack.createUser(email, 'member-password-1');
    const { accessToken } = await loginWithPassword({ authUrl: stack.authUrl, email, password: 'member-password-1' });
    expect((await platform('GET', '/plans', undefined, accessToken)).status).toBe(403);
    expect((await platform('POST', '/plans', { name: `nope-${run}` }, accessToken)).status).toBe(403);
    expect((await platform('PUT', '/plans/default', { limits: { records: 1 } }, accessToken)).status).toBe(403);
    expect((await platform('DELETE', '/plans/default', undefined, accessToken)).status).toBe(403);
    expect((await platform('PUT', `/workspaces/${ws}/plan`, { plan: 'default' }, accessToken)).status).toBe(403);
    // Not a member: the workspace's usage is not theirs to read.
    expect((await platform('GET', `/workspaces/${ws}/usage`, undefined, accessToken)).status).toBe(404);
  });
});

describe('a workspace whose plan turns features off', () => {
  const off = `off-${run}`;
  let token: string;

  beforeAll(async () => {
    token = await adminWorkspaceToken(stack, off);
    const plan = await platform('POST', '/plans', {
      name: `bare-${run}`,
      features: { endpoints: false, inboundCapture: false, temporal: false },
    });
    expect(plan.status).toBe(201);
    expect((await platform('PUT', `/workspaces/${off}/plan`, { plan: `bare-${run}` })).status).toBe(200);
  });

  const offData = (method: string, path: string, body?: unknown) =>
    call(method, `${stack.baseUrl}/data/workspace/${off}/api/v1${path}`, {
      token,
      ...(body !== undefined ? { body } : {}),
    });

  it('refuses endpoint and http-trigger triggers with 403 PLAN_RESTRICTED, and allows the rest', async () => {
    const endpointFn = await offData('POST', '/compute-functions', {
      name: 'page',
      code: 'export default async (context) => context.req.payload;',
    });
    expect(endpointFn.status).toBe(201);
    const endpoint = await offData('POST', '/function-triggers', {
      name: 'ep',
      functionId: endpointFn.body.id,
      executionType: 'endpoint',
      triggerMetadata: { path: 'ep' },
    });
    expect(endpoint.status).toBe(403);
    expect(endpoint.body).toMatchObject({
      statusCode: 403,
      details: [{ field: 'endpoints', feature: 'endpoints', enabled: false, plan: `bare-${run}` }],
    });
    const fn = await offData('POST', '/compute-functions', { name: 'job', code: 'async function run() { return 1; }' });
    expect(fn.status).toBe(201);
    const hook = await offData('POST', '/function-triggers', {
      name: 'hook',
      functionId: fn.body.id,
      executionType: 'http-trigger',
      triggerMetadata: { path: 'hook' },
    });
    expect(hook.status).toBe(403);
    expect(hook.body.details).toEqual([expect.objectContaining({ feature: 'inboundCapture', enabled: false })]);
    const onDemand = await offData('POST', '/function-triggers', {
      name: 'manual',
      functionId: fn.body.id,
      executionType: 'on-demand',
    });
    expect(onDemand.status).toBe(201);
    const page = (await platform('GET', `/workspaces/${off}/usage`)).body;
    expect(page.features).toEqual({ endpoints: false, inboundCapture: false, temporal: false });
    expect(page.resources.functions).toEqual({ limit: null, usage: 2 });
  });

  it('refuses a call to an endpoint made before the plan turned endpoints off, before any worker is asked', async () => {
    expect((await platform('PUT', `/workspaces/${off}/plan`, { plan: 'default' })).status).toBe(200);
    const fn = await offData('POST', '/compute-functions', {
      name: 'echo-page',
      code: 'export default async (context) => context.req.payload;',
    });
    const made = await offData('POST', '/function-triggers', {
      name: 'page',
      functionId: fn.body.id,
      executionType: 'endpoint',
      triggerMetadata: { path: 'page', auth: { mode: 'public' } },
    });
    expect(made.status).toBe(201);
    // The compute API's own endpoint route: with the feature on, it goes on to look for a worker (none here).
    const url = `${stack.computeUrl}/data/workspace/${off}/api/v1/endpoints/page`;
    expect((await call('POST', url, { body: { a: 1 } })).status).toBe(503);
    expect((await platform('PUT', `/workspaces/${off}/plan`, { plan: `bare-${run}` })).status).toBe(200);
    const answered = await eventually(async () => {
      const r = await call('POST', url, { body: { a: 1 } });
      return r.status === 403 ? r : undefined;
    }, 30_000);
    expect(answered.status).toBe(403);
    expect(answered.body).toMatchObject({
      statusCode: 403,
      details: [{ field: 'endpoints', feature: 'endpoints', enabled: false }],
    });
  });

  it('counts concurrent bulk writes of one workspace exactly, without deadlocks', async () => {
    const notes = await offData('POST', '/structures', {
      name: 'Jottings',
      properties: [{ name: 'n', type: 'number' }],
    });
    expect(notes.status).toBe(200);
    const writes = await Promise.all(
      Array.from({ length: 8 }, (_, w) =>
        offData('POST', '/records/bulk', {
          structureId: notes.body.id,
          records: Array.from({ length: 10 }, (_, i) => ({ data: { n: w * 10 + i } })),
        }),
      ),
    );
    expect(writes.map((w) => w.status)).toEqual(Array(8).fill(200));
    const page = (await platform('GET', `/workspaces/${off}/usage`)).body;
    expect(page.resources.records).toEqual({ limit: null, usage: 80 });
  });

  it('refuses an arrival at an http-trigger made before the plan turned inbound capture off', async () => {
    expect((await platform('PUT', `/workspaces/${off}/plan`, { plan: 'default' })).status).toBe(200);
    const fn = await offData('POST', '/compute-functions', {
      name: 'hooked',
      code: 'async function run() { return 1; }',
    });
    const hook = await offData('POST', '/function-triggers', {
      name: 'hook',
      functionId: fn.body.id,
      executionType: 'http-trigger',
      triggerMetadata: { path: 'hook' },
    });
    expect(hook.status).toBe(201);
    expect((await platform('PUT', `/workspaces/${off}/plan`, { plan: `bare-${run}` })).status).toBe(200);
    // The plan change is announced to every service: the refusal follows at once, or within moments.
    const arrival = await eventually(async () => {
      const r = await offData('POST', '/http-trigger/hook', { order: 1 });
      return r.status === 403 ? r : undefined;
    }, 30_000);
    expect(arrival.status).toBe(403);
    expect(arrival.body).toMatchObject({
      statusCode: 403,
      details: [{ field: 'inboundCapture', feature: 'inboundCapture', enabled: false }],
    });
    const captured = await offData('GET', '/inbound-events');
    expect(captured.body.data).toEqual([]);
  });
});

describe('concurrent creates at a limit', () => {
  it('never pass a locked count together: of six functions created at once with room for three, three are made', async () => {
    const racing = `race-${run}`;
    const token = await adminWorkspaceToken(stack, racing);
    expect((await platform('POST', '/plans', { name: `three-${run}`, limits: { functions: 3 } })).status).toBe(201);
    expect((await platform('PUT', `/workspaces/${racing}/plan`, { plan: `three-${run}` })).status).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        call('POST', `${stack.baseUrl}/data/workspace/${racing}/api/v1/compute-functions`, {
          token,
          body: { name: `fn-${i}`, code: 'async function run() { return 1; }' },
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 403, 403, 403]);
    const page = (await platform('GET', `/workspaces/${racing}/usage`)).body;
    expect(page.resources.functions).toEqual({ limit: 3, usage: 3 });
  });
});

describe('a workspace filled to its small plan', () => {
  let collectionId: string;

  beforeAll(async () => {
    const plan = await platform('POST', '/plans', {
      name: `small-${run}`,
      limits: {
        records: 3,
        storageBytes: null,
        functionExecutionsPerMonth: 3,
        functions: 2,
        triggers: 2,
        orchestrations: 2,
        webhookSubscriptions: 2,
        serviceAccounts: 2,
      },
    });
    expect(plan.status).toBe(201);
    const assigned = await platform('PUT', `/workspaces/${ws}/plan`, { plan: `small-${run}` });
    expect(assigned.status).toBe(200);
    expect(assigned.body).toMatchObject({ workspaceSlug: ws, plan: `small-${run}` });
    expect((await platform('PUT', `/workspaces/${ws}/plan`, { plan: 'no-such-plan' })).status).toBe(422);
    const structure = await data('POST', '/structures', {
      name: 'Notes',
      properties: [{ name: 'text', type: 'string' }],
    });
    expect(structure.status).toBe(200);
    collectionId = structure.body.id;
  });

  it('refuses the record past the limit with 429 QUOTA_EXCEEDED, the limit and the usage; a delete frees a slot', async () => {
    const ids: string[] = [];
    for (const text of ['a', 'b']) {
      const res = await data('POST', '/records', { structureId: collectionId, data: { text } });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    // A bulk create that would pass the limit is refused whole.
    const bulk = await data('POST', '/records/bulk', {
      structureId: collectionId,
      records: [{ data: { text: 'c' } }, { data: { text: 'd' } }],
    });
    expect(bulk.status).toBe(429);
    expect(bulk.body.error).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      details: { resource: 'records', limit: 3, usage: 2, plan: `small-${run}` },
    });
    expect((await usage()).resources.records).toEqual({ limit: 3, usage: 2 });

    expect((await data('POST', '/records', { structureId: collectionId, data: { text: 'c' } })).status).toBe(201);
    const refused = await data('POST', '/records', { structureId: collectionId, data: { text: 'd' } });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: {
        code: 'QUOTA_EXCEEDED',
        message: expect.stringContaining("plan 'small-"),
        details: { resource: 'records', limit: 3, usage: 3, plan: `small-${run}` },
      },
    });
    const upsert = await data('POST', `/records/slug/notes/upsert`, { match: { text: 'e' }, data: {} });
    expect(upsert.status).toBe(429);

    expect((await data('DELETE', `/records/${ids[0]}`)).status).toBeLessThan(300);
    expect((await usage()).resources.records).toEqual({ limit: 3, usage: 2 });
    expect((await data('POST', '/records', { structureId: collectionId, data: { text: 'd' } })).status).toBe(201);
    const page = await usage();
    expect(page.resources.records).toEqual({ limit: 3, usage: 3 });
    expect(page.resources.storageBytes.usage).toBeGreaterThan(0);
  });

  it('refuses the service account past the limit with 403 QUOTA_EXCEEDED in the general shape', async () => {
    for (const name of [`sa-one-${run}`, `sa-two-${run}`]) {
      expect((await iam('POST', '/service-accounts', { name })).status).toBe(201);
    }
    const refused = await iam('POST', '/service-accounts', { name: `sa-three-${run}` });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      error: 'Forbidden',
      code: 'QUOTA_EXCEEDED',
      details: [
        { field: 'serviceAccounts', resource: 'serviceAccounts', limit: 2, usage: 2, message: expect.any(String) },
      ],
    });
    expect((await usage()).resources.serviceAccounts).toEqual({ limit: 2, usage: 2 });
    const list = await iam('GET', '/service-accounts');
    const one = (list.body.data as { id: number; name: string }[]).find((a) => a.name === `sa-one-${run}`)!;
    expect((await iam('DELETE', `/service-accounts/${one.id}`)).status).toBeLessThan(300);
    expect((await iam('POST', '/service-accounts', { name: `sa-three-${run}` })).status).toBe(201);
  });

  it('refuses the function and the trigger past their limits with 403 QUOTA_EXCEEDED; a delete frees a slot', async () => {
    const code = 'async function run() { return 1; }';
    const fns: string[] = [];
    for (const name of ['f1', 'f2']) {
      const res = await data('POST', '/compute-functions', { name, code });
      expect(res.status).toBe(201);
      fns.push(res.body.id);
    }
    const refused = await data('POST', '/compute-functions', { name: 'f3', code });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      statusCode: 403,
      error: expect.stringContaining('allows 2 functions and the workspace has 2'),
      details: [{ field: 'functions', resource: 'functions', limit: 2, usage: 2 }],
    });
    expect((await usage()).resources.functions).toEqual({ limit: 2, usage: 2 });

    const triggers: string[] = [];
    for (const name of ['t1', 't2']) {
      const res = await data('POST', '/function-triggers', { name, functionId: fns[0], executionType: 'on-demand' });
      expect(res.status).toBe(201);
      triggers.push(res.body.id ?? res.body.data?.id);
    }
    const past = await data('POST', '/function-triggers', {
      name: 't3',
      functionId: fns[0],
      executionType: 'on-demand',
    });
    expect(past.status).toBe(403);
    expect(past.body.details).toEqual([expect.objectContaining({ resource: 'triggers', limit: 2, usage: 2 })]);
    expect((await usage()).resources.triggers).toEqual({ limit: 2, usage: 2 });
    expect((await data('DELETE', `/function-triggers/${triggers[0]}`)).status).toBeLessThan(300);
    expect(
      (await data('POST', '/function-triggers', { name: 't3', functionId: fns[0], executionType: 'on-demand' })).status,
    ).toBe(201);

    expect((await data('DELETE', `/compute-functions/${fns[1]}`)).status).toBeLessThan(300);
    expect((await data('POST', '/compute-functions', { name: 'f3', code })).status).toBe(201);
  });

  it("refuses a run past the month's function executions with 403 QUOTA_EXCEEDED, and starts again next month", async () => {
    const listed = await data('GET', '/function-triggers');
    const trigger = (listed.body.triggers as { id: string; isSystem: boolean; executionType: string }[]).find(
      (t) => !t.isSystem && t.executionType === 'on-demand',
    )!;
    const execute = () => data('POST', `/function-triggers/${trigger.id}/execute`, {});
    for (let i = 0; i < 3; i++) expect((await execute()).status).toBe(200);
    const refused = await execute();
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      statusCode: 403,
      details: [{ field: 'functionExecutionsPerMonth', resource: 'functionExecutionsPerMonth', limit: 3, usage: 3 }],
    });
    expect((await usage()).resources.functionExecutionsPerMonth).toEqual({ limit: 3, usage: 3 });
    // A test run is an execution too.
    expect(
      (await data('POST', '/compute-functions/test', { code: 'async function run() { return 1; }', params: {} }))
        .status,
    ).toBe(403);

    computeClock.advance(2 * 60_000); // 2026-07-01T00:01Z: a new month
    expect((await execute()).status).toBe(200);
    expect((await usage()).resources.functionExecutionsPerMonth).toEqual({ limit: 3, usage: 1 });
  });

  it('refuses the orchestration and the webhook subscription past their limits with 403 QUOTA_EXCEEDED', async () => {
    const orchestrations = `${stack.baseUrl}/orchestration/ws/${ws}/api/v1/orchestrations`;
    const orchestration = (slug: string) =>
      call('POST', orchestrations, {
        token: admin,
        body: {
          slug,
          name: slug,
          trigger: { type: 'on-demand' },
          steps: [{ id: 'wait', type: 'delay', delayMs: 1000 }],
        },
      });
    const made: string[] = [];
    for (const slug of ['o1', 'o2']) {
      const res = await orchestration(slug);
      expect(res.status).toBe(201);
      made.push(res.body.id);
    }
    const refused = await orchestration('o3');
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({
      error: 'forbidden',
      details: [{ field: 'orchestrations', resource: 'orchestrations', limit: 2, usage: 2 }],
    });
    expect((await usage()).resources.orchestrations).toEqual({ limit: 2, usage: 2 });
    expect((await call('DELETE', `${orchestrations}/${made[0]}`, { token: admin })).status).toBe(204);
    expect((await orchestration('o3')).status).toBe(201);

    const subscriptions = `${stack.baseUrl}/data/workspace/${ws}/api/v1/webhook-subscriptions`;
    const subscription = (name: string) =>
      call('POST', subscriptions, {
        token: admin,
        body: { name, url: 'https://hooks.example.test/strata', events: ['record_created'] },
      });
    const subs: string[] = [];
    for (const name of ['s1', 's2']) {
      const res = await subscription(name);
      expect(res.status).toBe(201);
      subs.push(res.body.id);
    }
    const past = await subscription('s3');
    expect(past.status).toBe(403);
    expect(past.body).toMatchObject({
      code: 'QUOTA_EXCEEDED',
      details: [{ field: 'webhookSubscriptions', resource: 'webhookSubscriptions', limit: 2, usage: 2 }],
    });
    expect((await usage()).resources.webhookSubscriptions).toEqual({ limit: 2, usage: 2 });
    expect((await call('DELETE', `${subscriptions}/${subs[0]}`, { token: admin })).status).toBeLessThan(300);
    expect((await subscription('s3')).status).toBe(201);
  });

  it('repairs a counter made wrong on purpose at the next reconciliation', async () => {
    const before = (await usage()).resources.records.usage as number;
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      await db.query(
        'UPDATE data.usage_counters SET records = records + 40 WHERE workspace_slug = $1 AND slot = (SELECT min(slot) FROM data.usage_counters WHERE workspace_slug = $1)',
        [ws],
      );
    } finally {
      await db.end();
    }
    // The reconciliation (every 300 ms here) takes the 40 away again.
    const seen = await eventually(async () => {
      const now = (await usage()).resources.records.usage as number;
      return now === before ? now : undefined;
    }, 60_000);
    expect(seen).toBe(before);
  });
});
