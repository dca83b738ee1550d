import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import {
  adminWorkspaceToken,
  call,
  serviceAccountToken,
  startStack,
  type Stack,
  type WorkerProcess,
} from '@strata/testkit';

let stack: Stack;
let worker: WorkerProcess;
const suffix = Date.now().toString(36);
const ws = `trig-${suffix}`;
const otherWs = `trig-other-${suffix}`;
let token: string;
let otherToken: string;
let functionId: string;

const base = (workspace = ws) => `${stack.baseUrl}/data/workspace/${workspace}/api/v1`;
/**
 * Echoes its parameters. A value of an encrypted parameter is masked in the stored
 * result (docs/compute.md, "Encrypted parameters"): its string reversed shows what came in.
 */
const CODE = `async function run() {
  const reversed = {};
  for (const [k, v] of Object.entries(triggerParams)) if (typeof v === 'string') reversed[k] = v.split('').reverse().join('');
  return { success: true, data: { triggerParams, executionParams, reversed } };
}`;
const MASK = '********';
const reverse = (text: string) => text.split('').reverse().join('');

beforeAll(async () => {
  stack = await startStack();
  worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
  token = await adminWorkspaceToken(stack, ws);
  otherToken = await adminWorkspaceToken(stack, otherWs);
  const fn = await call('POST', `${base()}/compute-functions`, { token, body: { name: 'echo', code: CODE } });
  expect(fn.status).toBe(201);
  functionId = fn.body.id;
});

afterAll(async () => {
  await stack?.stop();
});

const createTrigger = (body: Record<string, unknown>, t = token) =>
  call('POST', `${base()}/function-triggers`, { token: t, body: { functionId, ...body } });

/** The run of a job once it is final. */
async function finished(jobId: string): Promise<Record<string, any>> {
  const until = Date.now() + 45_000;
  for (;;) {
    const listed = await call('GET', `${base()}/function-runs?jobId=${jobId}`, { token });
    const r = listed.body.runs[0];
    if (r && !['queued', 'running'].includes(r.status)) {
      return (await call('GET', `${base()}/function-runs/${r.id}`, { token })).body;
    }
    if (Date.now() > until) throw new Error(`run of ${jobId} not final: ${JSON.stringify(r)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('function triggers', () => {
  it('creates an on-demand trigger with an encrypted parameter, answered sealed, and executes it', async () => {
    const created = await createTrigger({
      name: 'nightly-sync',
      executionType: 'on-demand',
      triggerMetadata: { params: { region: 'eu', apiKey: { value: 'sk-live-123', encrypt: true } } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.any(String),
      name: 'nightly-sync',
      functionId,
      executionType: 'on-demand',
      version: 1,
      paused: false,
      triggerMetadata: {
        params: { region: 'eu', apiKey: { value: expect.stringMatching(/^sv1\./), encrypted: true, keyVersion: 1 } },
      },
    });
    expect(JSON.stringify(created.body)).not.toContain('sk-live-123');
    const got = await call('GET', `${base()}/function-triggers/${created.body.id}`, { token });
    expect(JSON.stringify(got.body)).not.toContain('sk-live-123');
    // Not stored in the clear either.
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query('SELECT metadata::text AS m FROM compute.triggers WHERE id = $1', [
        created.body.id,
      ]);
      expect(rows[0].m).not.toContain('sk-live-123');
    } finally {
      await db.end();
    }

    const executed = await call('POST', `${base()}/function-triggers/${created.body.id}/execute`, {
      token,
      body: { orderId: 42, nested: { a: [1, 2] } },
    });
    expect(executed.status).toBe(200);
    expect(executed.body).toEqual(expect.stringMatching(/^[0-9a-f-]{36}$/));
    const run = await finished(executed.body);
    expect(run).toMatchObject({
      status: 'succeeded',
      triggerId: created.body.id,
      functionId,
      functionVersion: 1,
      executionSource: 'trigger',
      result: {
        data: {
          // Given in the clear, masked where the run is stored.
          triggerParams: { region: 'eu', apiKey: MASK },
          reversed: { region: 'ue', apiKey: reverse('sk-live-123') },
          executionParams: { orderId: 42, nested: { a: [1, 2] } },
        },
      },
    });
    // Without a body, executionParams is an empty object.
    const bare = await call('POST', `${base()}/function-triggers/${created.body.id}/execute`, { token });
    expect((await finished(bare.body)).result.data.executionParams).toEqual({});
  });

  it('keeps parameters named __proto__ and constructor, through storage and into the sandbox', async () => {
    const params = JSON.parse('{"__proto__": {"a": 1}, "constructor": "c", "plain": 1}') as Record<string, unknown>;
    const created = await createTrigger({ name: 'prototype-names', triggerMetadata: { params } });
    expect(created.status).toBe(201);
    const got = await call('GET', `${base()}/function-triggers/${created.body.id}`, { token });
    expect(Object.keys(got.body.triggerMetadata.params).sort()).toEqual(['__proto__', 'constructor', 'plain']);
    const executed = await call('POST', `${base()}/function-triggers/${created.body.id}/execute`, {
      token,
      body: JSON.parse('{"__proto__": {"b": 2}, "constructor": "d"}'),
    });
    expect(executed.status).toBe(200);
    const run = await finished(executed.body);
    expect(run.status).toBe('succeeded');
    expect(Object.keys(run.result.data.triggerParams).sort()).toEqual(['__proto__', 'constructor', 'plain']);
    expect(Object.getOwnPropertyDescriptor(run.result.data.triggerParams, '__proto__')?.value).toEqual({ a: 1 });
    expect(Object.keys(run.result.data.executionParams).sort()).toEqual(['__proto__', 'constructor']);
  });

  it("keeps a trigger draft's secrets sealed to the draft, and its published trigger runs with them", async () => {
    const secretsIn = (body: unknown) =>
      ['sk-draft-1', 'sk-draft-2', 'whsec-draft'].filter((s) => JSON.stringify(body).includes(s));
    const draft = await call('POST', `${base()}/drafts`, {
      token,
      body: {
        resourceType: 'function-triggers',
        data: {
          name: 'drafted-secret',
          functionId,
          triggerMetadata: { params: { region: 'eu', apiKey: { value: 'sk-draft-1', encrypt: true } } },
        },
      },
    });
    expect(draft.status).toBe(201);
    const sealed = { value: expect.stringMatching(/^sv1\./), encrypted: true, keyVersion: 1 };
    expect(draft.body.data.triggerMetadata.params).toEqual({ region: 'eu', apiKey: sealed });
    const got = await call('GET', `${base()}/drafts/${draft.body.id}`, { token });
    expect(secretsIn(got.body)).toEqual([]);
    const listed = await call('GET', `${base()}/drafts?resourceType=function-triggers`, { token });
    expect(secretsIn(listed.body)).toEqual([]);

    // Sent back as GET answered it, the sealed value is kept; a new one is sealed; a value sealed for
    // another draft does not open here.
    const other = await call('POST', `${base()}/drafts`, {
      token,
      body: {
        resourceType: 'function-triggers',
        data: { name: 'other', triggerMetadata: { params: { apiKey: { value: 'sk-draft-2', encrypt: true } } } },
      },
    });
    const foreign = await call('PUT', `${base()}/drafts/${draft.body.id}`, {
      token,
      body: { data: { ...got.body.data, triggerMetadata: { params: other.body.data.triggerMetadata.params } } },
    });
    expect(foreign).toMatchObject({
      status: 400,
      body: { error: expect.stringContaining('encrypted value of another trigger or parameter') },
    });
    const edited = await call('PUT', `${base()}/drafts/${draft.body.id}`, {
      token,
      body: {
        data: {
          ...got.body.data,
          triggerMetadata: {
            params: { ...got.body.data.triggerMetadata.params, extra: { value: 'sk-draft-2', encrypt: true } },
          },
        },
      },
    });
    expect(edited.status).toBe(200);
    expect(edited.body.data.triggerMetadata.params).toEqual({ region: 'eu', apiKey: sealed, extra: sealed });
    expect(secretsIn(edited.body)).toEqual([]);
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query('SELECT data::text AS d FROM compute.drafts WHERE id = $1', [draft.body.id]);
      expect(secretsIn(rows[0].d)).toEqual([]);
    } finally {
      await db.end();
    }

    const published = await call('POST', `${base()}/function-triggers/${draft.body.id}/publish`, { token });
    expect(published).toMatchObject({ status: 201, body: { triggerMetadata: { params: { apiKey: sealed } } } });
    expect(secretsIn(published.body)).toEqual([]);
    const executed = await call('POST', `${base()}/function-triggers/${published.body.id}/execute`, { token });
    const { data } = (await finished(executed.body)).result;
    expect(data.triggerParams).toEqual({ region: 'eu', apiKey: MASK, extra: MASK });
    expect(data.reversed).toEqual({ region: 'ue', apiKey: reverse('sk-draft-1'), extra: reverse('sk-draft-2') });

    // A secret in a form the trigger would refuse is refused by the draft too, never kept in the clear.
    for (const malformed of [
      { value: 'sk-draft-1', encrypt: 'true' },
      { value: 'sk-draft-1', encrypt: true, encrypted: true },
      { encrypt: true },
    ]) {
      const refused = await call('POST', `${base()}/drafts`, {
        token,
        body: { resourceType: 'function-triggers', data: { triggerMetadata: { params: { s: malformed } } } },
      });
      expect({ malformed, status: refused.status, field: refused.body.details?.[0]?.field }).toEqual({
        malformed,
        status: 400,
        field: 'data.triggerMetadata.params.s',
      });
    }

    // An http trigger's signing secret is a secret in a draft too.
    const hook = await call('POST', `${base()}/drafts`, {
      token,
      body: {
        resourceType: 'function-triggers',
        data: { triggerMetadata: { path: 'drafted-hook', signingSecret: 'whsec-draft' } },
      },
    });
    expect(hook.body.data.triggerMetadata.signingSecret).toEqual(sealed);
    expect(secretsIn(hook.body)).toEqual([]);
  });

  it('stores an http-trigger signing secret sealed, whatever form it was sent in', async () => {
    const created = await createTrigger({
      name: 'inbound-hook',
      executionType: 'http-trigger',
      triggerMetadata: { path: 'orders-hook', validateSignature: true, signingSecret: 'whsec-plain-secret' },
    });
    expect(created.status).toBe(201);
    expect(created.body.triggerMetadata.signingSecret).toEqual({
      value: expect.stringMatching(/^sv1\./),
      encrypted: true,
      keyVersion: 1,
    });
    expect(JSON.stringify(created.body)).not.toContain('whsec-plain-secret');
    // Sent back as GET answered it, it is kept.
    const kept = await call('PUT', `${base()}/function-triggers/${created.body.id}`, {
      token,
      body: { triggerMetadata: created.body.triggerMetadata },
    });
    expect(kept.status).toBe(200);
    expect(kept.body.triggerMetadata.signingSecret).toEqual(created.body.triggerMetadata.signingSecret);
  });

  it('versions every update, replaces metadata whole, keeps sealed values sent back, and never changes the type', async () => {
    const created = await createTrigger({
      name: 'versioned',
      triggerMetadata: { params: { secret: { value: 's3', encrypt: true }, plain: 1 } },
    });
    const sealed = created.body.triggerMetadata.params.secret;
    const updated = await call('PUT', `${base()}/function-triggers/${created.body.id}`, {
      token,
      body: { triggerMetadata: { params: { secret: sealed } }, description: 'now described' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ version: 2, description: 'now described' });
    // The omitted `plain` parameter is gone; the sealed one was kept as it was.
    expect(updated.body.triggerMetadata.params).toEqual({ secret: sealed });
    // A sealed value of another trigger does not open here.
    const other = await createTrigger({
      name: 'other',
      triggerMetadata: { params: { secret: { value: 'x', encrypt: true } } },
    });
    const moved = await call('PUT', `${base()}/function-triggers/${created.body.id}`, {
      token,
      body: { triggerMetadata: { params: { secret: other.body.triggerMetadata.params.secret } } },
    });
    expect(moved.status).toBe(400);
    expect(moved.body.details[0].field).toBe('triggerMetadata.params.secret');
    const retyped = await call('PUT', `${base()}/function-triggers/${created.body.id}`, {
      token,
      body: { executionType: 'scheduled' },
    });
    expect(retyped).toMatchObject({ status: 400, body: { details: [{ field: 'executionType' }] } });

    // Every saved version can be read back, newest first, its parameters sealed as in every answer.
    const versions = await call('GET', `${base()}/function-triggers/${created.body.id}/versions`, { token });
    expect(versions.status).toBe(200);
    expect(
      versions.body.versions.map((v: { version: number; description: string | null }) => [v.version, v.description]),
    ).toEqual([
      [2, 'now described'],
      [1, null],
    ]);
    const first = await call('GET', `${base()}/function-triggers/${created.body.id}/versions/1`, { token });
    expect(first.body).toMatchObject({
      triggerId: created.body.id,
      version: 1,
      name: 'versioned',
      functionId,
      triggerMetadata: { params: { plain: 1, secret: { encrypted: true } } },
      createdBy: expect.any(String),
      createdAt: expect.any(String),
    });
    expect(JSON.stringify(first.body)).not.toContain('s3"');
    expect(await call('GET', `${base()}/function-triggers/${created.body.id}/versions/9`, { token })).toMatchObject({
      status: 404,
      body: { error: 'Trigger version not found.' },
    });
    expect((await call('GET', `${base()}/function-triggers/${created.body.id}/versions/0`, { token })).status).toBe(
      400,
    );
    // Another workspace's trigger has no versions here.
    const foreign = await call(
      'GET',
      `${stack.baseUrl}/data/workspace/${otherWs}/api/v1/function-triggers/${created.body.id}/versions`,
      { token: otherToken },
    );
    expect(foreign).toMatchObject({ status: 404, body: { error: 'Trigger not found.' } });
  });

  it('checks metadata per type with one details entry per bad field', async () => {
    const bad = await createTrigger({
      name: 'bad-endpoint',
      executionType: 'endpoint',
      triggerMetadata: { path: 'has spaces', allowedMethods: ['GET', 'TRACE'], timeoutMs: 500, extra: true },
    });
    expect(bad.status).toBe(400);
    const fields = bad.body.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(
      expect.arrayContaining([
        'triggerMetadata.path',
        'triggerMetadata.allowedMethods[1]',
        'triggerMetadata.timeoutMs',
        'triggerMetadata.extra',
      ]),
    );
    const noEvent = await createTrigger({ name: 'no-event', executionType: 'event-driven', triggerMetadata: {} });
    expect(noEvent.status).toBe(400);
    expect(noEvent.body.details.map((d: { field: string }) => d.field)).toEqual(
      expect.arrayContaining(['triggerMetadata.event', 'triggerMetadata.recordSlug']),
    );
    const zero = await createTrigger({ name: 'zero', executionType: 'scheduled', triggerMetadata: { interval: 0 } });
    expect(zero).toMatchObject({ status: 400, body: { details: [{ field: 'triggerMetadata.interval' }] } });
    const missing = await createTrigger({ name: 'orphan', functionId: '00000000-0000-4000-8000-000000000000' });
    expect(missing).toMatchObject({ status: 400, body: { error: 'Function not found.' } });
    expect(await createTrigger({ functionId })).toMatchObject({
      status: 400,
      body: { error: 'Trigger name is required.' },
    });
    expect(await createTrigger({ functionId, name: 42 })).toMatchObject({
      status: 400,
      body: { error: 'Trigger name must be a string.' },
    });
    // A function left out is said to be required; one that is not an id, to be a UUID.
    expect(await createTrigger({ name: 'no function', functionId: undefined })).toMatchObject({
      status: 400,
      body: { error: 'functionId is required: the UUID of a compute function.' },
    });
    expect(await createTrigger({ name: 'bad function', functionId: 'abc' })).toMatchObject({
      status: 400,
      body: { error: 'functionId must be a UUID.' },
    });
    // Every problem at once: the body's fields, its metadata and its function, one entry each.
    const everything = await createTrigger({
      name: 42,
      description: 7,
      functionId: '00000000-0000-4000-8000-000000000000',
      executionType: 'scheduled',
      triggerMetadata: { interval: 0, extra: true },
      ['__proto__']: 1, // an own key, as parsed JSON has it
    });
    expect(everything.status).toBe(400);
    expect(everything.body.details.map((d: { field: string }) => d.field).sort()).toEqual(
      ['__proto__', 'description', 'functionId', 'name', 'triggerMetadata.extra', 'triggerMetadata.interval'].sort(),
    );
    expect(everything.body.details).toContainEqual({ field: 'functionId', message: 'Function not found.' });
    const badDraft = await call('POST', `${base()}/drafts`, {
      token,
      body: {
        resourceType: 'function-triggers',
        data: { functionId, executionType: 'event-driven', triggerMetadata: { event: 'record.teleported' } },
      },
    });
    const unpublished = await call('POST', `${base()}/function-triggers/${badDraft.body.id}/publish`, { token });
    expect(unpublished.status).toBe(400);
    expect(unpublished.body.details.map((d: { field: string }) => d.field)).toEqual(
      expect.arrayContaining(['name', 'triggerMetadata.event', 'triggerMetadata.recordSlug']),
    );
    expect((await call('GET', `${base()}/drafts/${badDraft.body.id}`, { token })).status).toBe(200);
    // Only on-demand triggers execute this way.
    const scheduled = await createTrigger({
      name: 'every-hour',
      executionType: 'scheduled',
      triggerMetadata: { interval: 3600 },
    });
    expect(scheduled.status).toBe(201);
    const refused = await call('POST', `${base()}/function-triggers/${scheduled.body.id}/execute`, { token, body: {} });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toContain('on-demand');
  });

  it('keeps endpoint and http-trigger paths unique per workspace and type', async () => {
    const endpointFn = await call('POST', `${base()}/compute-functions`, {
      token,
      body: { name: 'endpoint-code', code: 'export default async (context) => context.req.payload;' },
    });
    const endpoint = (name: string, path: string) =>
      createTrigger({ name, functionId: endpointFn.body.id, executionType: 'endpoint', triggerMetadata: { path } });
    expect((await endpoint('ep-1', 'orders')).status).toBe(201);
    expect(await endpoint('ep-2', 'orders')).toMatchObject({
      status: 409,
      body: { error: 'Another trigger of this type already has that path.' },
    });
    const hook = await createTrigger({
      name: 'hook-orders',
      executionType: 'http-trigger',
      triggerMetadata: { path: 'orders' },
    });
    expect(hook.status).toBe(201);
    const renamed = await endpoint('ep-3', 'invoices');
    const clash = await call('PUT', `${base()}/function-triggers/${renamed.body.id}`, {
      token,
      body: { triggerMetadata: { path: 'orders' } },
    });
    expect(clash.status).toBe(409);
  });

  it('names are unique, lists and pauses, and the system default trigger is fixed', async () => {
    expect((await createTrigger({ name: 'dup' })).status).toBe(201);
    expect(await createTrigger({ name: 'dup' })).toMatchObject({
      status: 409,
      body: { error: 'Trigger with that name already exists.' },
    });
    // The system default trigger's name is taken even before a test run has made it: a trigger of that name
    // would keep it from being made.
    const reserved = await createTrigger({ name: 'system-default' });
    expect(reserved).toMatchObject({ status: 409, body: { error: 'Trigger with that name already exists.' } });
    const dup = (await call('GET', `${base()}/function-triggers?search=dup`, { token })).body.triggers[0];
    const renamed = await call('PUT', `${base()}/function-triggers/${dup.id}`, {
      token,
      body: { name: 'system-default' },
    });
    expect(renamed.status).toBe(409);
    const listed = await call('GET', `${base()}/function-triggers?search=dup`, { token });
    expect(listed.body).toMatchObject({ total: 1, page: 1, limit: 500 });
    const refused = await call('GET', `${base()}/function-triggers?limit=0&page=0&sort=x&searchField=zz`, { token });
    expect(refused.status).toBe(400);
    expect(refused.body.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'limit',
      'page',
      'searchField',
      'sort',
    ]);
    expect(Object.keys(listed.body.triggers[0]).sort()).toEqual(
      ['createdAt', 'executionType', 'functionId', 'id', 'isSystem', 'name', 'paused'].sort(),
    );
    const id = listed.body.triggers[0].id as string;
    expect(await call('PATCH', `${base()}/function-triggers/${id}/pause`, { token })).toMatchObject({
      status: 200,
      body: { success: true },
    });
    expect((await call('POST', `${base()}/function-triggers/${id}/execute`, { token, body: {} })).status).toBe(409);
    expect((await call('PATCH', `${base()}/function-triggers/${id}/resume`, { token })).status).toBe(200);
    expect((await call('POST', `${base()}/function-triggers/${id}/execute`, { token, body: {} })).status).toBe(200);

    // A test run goes through the system default trigger.
    const test = await call('POST', `${base()}/compute-functions/test`, { token, body: { code: CODE, params: {} } });
    const run = await finished(test.body.jobId);
    const system = await call('GET', `${base()}/function-triggers/${run.triggerId}`, { token });
    expect(system.body).toMatchObject({ name: 'system-default', isSystem: true, executionType: 'on-demand' });
    for (const [method, path, body] of [
      ['PUT', '', { name: 'mine' }],
      ['DELETE', '', undefined],
      ['PATCH', '/pause', undefined],
    ] as const) {
      const res = await call(method, `${base()}/function-triggers/${run.triggerId}${path}`, {
        token,
        ...(body ? { body } : {}),
      });
      expect({ method, status: res.status, error: res.body.error }).toEqual({
        method,
        status: 400,
        error: 'The system default trigger cannot be updated or deleted.',
      });
    }
    expect(
      await call('POST', `${base()}/function-triggers/${run.triggerId}/execute`, { token, body: {} }),
    ).toMatchObject({
      status: 400,
      body: {
        error: 'The system default trigger runs test code only (POST /compute-functions/test); it cannot be executed.',
      },
    });
  });

  it('stops triggers when their function is deleted, publishes drafts, and keeps workspaces apart', async () => {
    const fn = await call('POST', `${base()}/compute-functions`, { token, body: { name: 'short-lived', code: CODE } });
    const trigger = await createTrigger({ name: 'of-short-lived', functionId: fn.body.id });
    expect((await call('DELETE', `${base()}/compute-functions/${fn.body.id}`, { token })).status).toBe(200);
    expect((await call('GET', `${base()}/function-triggers/${trigger.body.id}`, { token })).status).toBe(404);
    expect(
      (await call('POST', `${base()}/function-triggers/${trigger.body.id}/execute`, { token, body: {} })).status,
    ).toBe(404);

    const draft = await call('POST', `${base()}/drafts`, {
      token,
      body: { resourceType: 'function-triggers', data: { name: 'from-draft', functionId } },
    });
    const published = await call('POST', `${base()}/function-triggers/${draft.body.id}/publish`, { token });
    expect(published).toMatchObject({ status: 201, body: { name: 'from-draft', executionType: 'on-demand' } });
    expect((await call('GET', `${base()}/drafts/${draft.body.id}`, { token })).status).toBe(404);

    const mine = await createTrigger({ name: 'private-trigger' });
    for (const [method, path] of [
      ['GET', ''],
      ['DELETE', ''],
      ['POST', '/execute'],
      ['PATCH', '/pause'],
    ] as const) {
      const res = await call(method, `${base(otherWs)}/function-triggers/${mine.body.id}${path}`, {
        token: otherToken,
        ...(method === 'POST' ? { body: {} } : {}),
      });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
    }
    // execute needs function-triggers:execute.
    const manager = await serviceAccountToken(stack, ws, token, {
      name: `trig-manager-${suffix}`,
      resource: 'function-triggers',
      actions: ['create', 'retrieve', 'list', 'update', 'delete'],
    });
    expect(
      (await call('POST', `${base()}/function-triggers/${mine.body.id}/execute`, { token: manager, body: {} })).status,
    ).toBe(403);
  });

  it('starts runs from inside a function with api.invokeTrigger, deeper each time, up to the depth limit', async () => {
    const chain = await call('POST', `${base()}/compute-functions`, {
      token,
      body: {
        name: 'chain',
        code: `async function run() {
          try {
            const next = await api.invokeTrigger(triggerParams.self, { n: (executionParams.n ?? 0) + 1 });
            return { success: true, data: { n: executionParams.n ?? 0, next: next.jobId } };
          } catch (e) {
            return { success: true, data: { n: executionParams.n ?? 0, stopped: e.message } };
          }
        }`,
      },
    });
    const trigger = await createTrigger({ name: 'chain', functionId: chain.body.id });
    // The trigger names itself in its parameters.
    await call('PUT', `${base()}/function-triggers/${trigger.body.id}`, {
      token,
      body: { triggerMetadata: { params: { self: trigger.body.id } } },
    });
    let job = (await call('POST', `${base()}/function-triggers/${trigger.body.id}/execute`, { token, body: {} }))
      .body as string;
    const depths: number[] = [];
    for (;;) {
      const r = await finished(job);
      expect(r.status).toBe('succeeded');
      depths.push(r.executionContext.invocationDepth);
      if (r.result.data.stopped) {
        expect(r.result.data.stopped).toContain('at most 5 levels deep');
        break;
      }
      job = r.result.data.next;
    }
    expect(depths).toEqual([0, 1, 2, 3, 4, 5]);
    const onEvents = await createTrigger({
      name: 'not-invokable',
      executionType: 'event-driven',
      triggerMetadata: { event: 'record_created', recordSlug: 'nothing-here' },
    });
    expect(onEvents.status).toBe(201);
    const refused = await call('POST', `${base()}/compute-functions/test`, {
      token,
      body: {
        code: `async function run() {
          const out = [];
          for (const id of ['not-a-uuid', '00000000-0000-4000-8000-000000000000', '${onEvents.body.id}']) {
            try { await api.invokeTrigger(id); out.push('started'); } catch (e) { out.push(e.message); }
          }
          return { success: true, data: out };
        }`,
        params: {},
      },
    });
    const r = await finished(refused.body.jobId);
    expect(r.result.data).toEqual([
      'triggerId must be a UUID',
      '404: Trigger not found.',
      '400: Only on-demand triggers can be executed this way; this trigger is event-driven.',
    ]);
  });
});

describe('event-driven triggers', () => {
  /** The runs of a trigger, once there are `count` of them that are final (polled with a deadline). */
  async function runsOf(triggerId: string, count: number): Promise<Record<string, any>[]> {
    const until = Date.now() + 45_000;
    for (;;) {
      const listed = await call('GET', `${base()}/function-runs?triggerId=${triggerId}&limit=100`, { token });
      const runs = listed.body.runs as Record<string, any>[];
      if (runs.length >= count && runs.every((r) => !['queued', 'running'].includes(r.status))) {
        return Promise.all(
          runs.map(async (r) => (await call('GET', `${base()}/function-runs/${r.id}`, { token })).body),
        );
      }
      if (Date.now() > until) throw new Error(`trigger ${triggerId}: ${runs.length} runs, wanted ${count}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('runs on matching record events with the event payload as executionParams, once per event, never for paused triggers', async () => {
    const collection = await call('POST', `${base()}/structures`, {
      token,
      body: { name: 'Orders', recordSlug: 'orders', properties: [{ name: 'sku', type: 'string' }] },
    });
    expect(collection.status).toBeLessThan(300);
    const watch = (name: string, event: string, recordSlug = 'orders') =>
      createTrigger({
        name,
        executionType: 'event-driven',
        triggerMetadata: { event, recordSlug, params: { source: name } },
      });
    const created = await watch('on-order-created', 'record_created');
    const paused = await watch('paused-watch', 'record_created');
    const elsewhere = await watch('on-other-collection', 'record_created', 'invoices');
    // The dotted form the spec's records page writes names the same event.
    const updated = await watch('on-order-updated', 'record.updated');
    for (const t of [created, paused, elsewhere, updated]) expect(t.status).toBe(201);
    expect(updated.body.triggerMetadata.event).toBe('record_updated');
    expect((await call('PATCH', `${base()}/function-triggers/${paused.body.id}/pause`, { token })).status).toBe(200);

    const record = await call('POST', `${base()}/records`, {
      token,
      body: { structureId: collection.body.id, data: { sku: 'A-1' } },
    });
    const [run] = await runsOf(created.body.id, 1);
    expect(run).toMatchObject({ status: 'succeeded', executionSource: 'trigger', triggerId: created.body.id });
    expect(run!.result.data.triggerParams).toEqual({ source: 'on-order-created' });
    expect(run!.result.data.executionParams).toMatchObject({
      event: 'record_created',
      workspaceSlug: ws,
      recordSlug: 'orders',
      recordId: record.body.id,
      data: { id: record.body.id, data: { sku: 'A-1' } },
    });
    await call('PATCH', `${base()}/records/${record.body.id}`, { token, body: { data: { sku: 'A-2' } } });
    const [changed] = await runsOf(updated.body.id, 1);
    expect(changed!.result.data.executionParams).toMatchObject({ event: 'record_updated', recordId: record.body.id });

    // The consumer forgets where it was (deleted, and made again by the worker that consumes, restarted):
    // every event comes again, and no (event, trigger) pair runs twice.
    const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
    try {
      await (
        await jetstreamManager(nc)
      ).consumers.delete(`${stack.natsPrefix}_routed_records`, `${stack.natsPrefix}_routed_compute`);
    } finally {
      await nc.close();
    }
    await worker.stop();
    worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
    const second = await call('POST', `${base()}/records`, {
      token,
      body: { structureId: collection.body.id, data: { sku: 'B-1' } },
    });
    const runs = await runsOf(created.body.id, 2);
    expect(runs.map((r) => r.result.data.executionParams.recordId).sort()).toEqual(
      [record.body.id, second.body.id].sort(),
    );
    // None for the paused trigger or the other collection's.
    for (const id of [paused.body.id, elsewhere.body.id]) {
      expect((await call('GET', `${base()}/function-runs?triggerId=${id}`, { token })).body.total).toBe(0);
    }
  });

  it('runs on a failure event: a refused create of the collection starts the trigger with the failure', async () => {
    const collection = await call('POST', `${base()}/structures`, {
      token,
      body: {
        name: 'Invoices',
        recordSlug: 'invoices',
        properties: [{ name: 'amount', type: 'number', required: true }],
      },
    });
    expect(collection.status).toBeLessThan(300);
    const trigger = await createTrigger({
      name: 'on-refused-invoice',
      executionType: 'event-driven',
      triggerMetadata: { event: 'record_created_failed', recordSlug: 'invoices' },
    });
    expect(trigger.status).toBe(201);
    const refused = await call('POST', `${base()}/records`, {
      token,
      body: { structureId: collection.body.id, data: { amount: 'lots' } },
    });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    const [run] = await runsOf(trigger.body.id, 1);
    expect(run).toMatchObject({ status: 'succeeded' });
    expect(run!.result.data.executionParams).toMatchObject({
      event: 'record_created_failed',
      recordSlug: 'invoices',
      error: expect.any(Object),
    });
  });

  it('keeps an event while no worker runs, and a worker that comes back runs it once', async () => {
    const collection = await call('POST', `${base()}/structures`, {
      token,
      body: { name: 'Parcels', recordSlug: 'parcels', properties: [{ name: 'ref', type: 'string' }] },
    });
    expect(collection.status).toBeLessThan(300);
    const trigger = await createTrigger({
      name: 'on-parcel',
      executionType: 'event-driven',
      triggerMetadata: { event: 'record_created', recordSlug: 'parcels' },
    });
    expect(trigger.status).toBe(201);
    // No worker: the workers consume record events, so the event waits in the stream, unacknowledged.
    await worker.stop();
    const record = await call('POST', `${base()}/records`, {
      token,
      body: { structureId: collection.body.id, data: { ref: 'P-1' } },
    });
    expect(record.status).toBe(201);
    worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
    const [run] = await runsOf(trigger.body.id, 1);
    expect(run).toMatchObject({ status: 'succeeded' });
    expect(run!.result.data.executionParams).toMatchObject({ recordId: record.body.id });
    expect((await call('GET', `${base()}/function-runs?triggerId=${trigger.body.id}`, { token })).body.total).toBe(1);
  });

  it('answers every one of 30 pauses, resumes and executions of one trigger at once, and goes on answering', async () => {
    // Each pause and resume used to take a second pooled connection inside its transaction: ten at once
    // held the compute API's ten connections, waited for an eleventh, and every request after them hung.
    const trigger = await createTrigger({ name: 'contended' });
    expect(trigger.status).toBe(201);
    const path = `${base()}/function-triggers/${trigger.body.id}`;
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        i % 3 === 0
          ? call('PATCH', `${path}/pause`, { token })
          : i % 3 === 1
            ? call('PATCH', `${path}/resume`, { token })
            : call('POST', `${path}/execute`, { token, body: {} }),
      ),
    );
    for (const answer of answers) expect([200, 409]).toContain(answer.status);
    expect((await call('GET', `${base()}/compute-functions`, { token })).status).toBe(200);
  });
});

describe('re-runs', () => {
  it('re-runs a run with its stored parameters, overrides merged, counted on the original, listed in its history', async () => {
    const fn = await call('POST', `${base()}/compute-functions`, {
      token,
      body: {
        name: 'versioned-echo',
        code: 'async function run() { return { success: true, data: { v: 1, p: executionParams } }; }',
      },
    });
    const trigger = await createTrigger({ name: 'rerunnable', functionId: fn.body.id });
    const job = (
      await call('POST', `${base()}/function-triggers/${trigger.body.id}/execute`, { token, body: { a: 1 } })
    ).body;
    const original = await finished(job);
    expect(original.result.data).toEqual({ v: 1, p: { a: 1 } });
    // The function changes after the run.
    await call('PUT', `${base()}/compute-functions/${fn.body.id}`, {
      token,
      body: { code: 'async function run() { return { success: true, data: { v: 2, p: executionParams } }; }' },
    });

    const rerun = await call('POST', `${base()}/function-runs/${original.id}/rerun`, {
      token,
      body: { reason: 'provider was down', overrideParams: { b: 2 } },
    });
    expect(rerun.status).toBe(200);
    expect(rerun.body).toEqual({ jobId: expect.any(String), message: expect.any(String) });
    const again = await finished(rerun.body.jobId);
    expect(again).toMatchObject({
      status: 'succeeded',
      isRerun: true,
      originalRunId: original.id,
      rerunBy: expect.any(String),
      rerunReason: 'provider was down',
      executionSource: 'rerun',
      functionVersion: 2,
      triggerId: trigger.body.id,
      // The function's current code, as the spec's re-run says (useLatestCode or not): a re-run runs the fix.
      result: { data: { v: 2, p: { a: 1, b: 2 } } },
    });
    const latest = await call('POST', `${base()}/function-runs/${original.id}/rerun`, {
      token,
      body: { useLatestCode: true },
    });
    expect((await finished(latest.body.jobId)).result.data).toEqual({ v: 2, p: { a: 1 } });

    const history = await call('GET', `${base()}/function-runs/${original.id}/rerun-history`, { token });
    expect(history.status).toBe(200);
    expect(history.body).toMatchObject({ originalRunId: original.id, rerunCount: 2 });
    expect(history.body.reruns.map((r: { isRerun: boolean }) => r.isRerun)).toEqual([true, true]);
    expect((await call('GET', `${base()}/function-runs/${original.id}`, { token })).body.rerunCount).toBe(2);

    // A paused trigger executes nothing, re-runs included, until it is resumed.
    expect((await call('PATCH', `${base()}/function-triggers/${trigger.body.id}/pause`, { token })).status).toBe(200);
    const whilePaused = await call('POST', `${base()}/function-runs/${original.id}/rerun`, { token, body: {} });
    expect(whilePaused).toMatchObject({ status: 409, body: { error: 'Trigger is paused.', statusCode: 409 } });
    expect((await call('GET', `${base()}/function-runs/${original.id}`, { token })).body.rerunCount).toBe(2);
    expect((await call('PATCH', `${base()}/function-triggers/${trigger.body.id}/resume`, { token })).status).toBe(200);
    const resumed = await call('POST', `${base()}/function-runs/${original.id}/rerun`, { token, body: {} });
    expect((await finished(resumed.body.jobId)).status).toBe('succeeded');

    // A test run re-runs its own code through the system trigger.
    const test = await call('POST', `${base()}/compute-functions/test`, {
      token,
      body: { code: CODE, params: { t: 1 } },
    });
    const testRun = await finished(test.body.jobId);
    const testAgain = await call('POST', `${base()}/function-runs/${testRun.id}/rerun`, { token });
    expect((await finished(testAgain.body.jobId)).result.data.executionParams).toEqual({ t: 1 });
  });

  it("answers the spec's re-run messages and needs execute on function-triggers", async () => {
    const rerun = (id: string, t = token) =>
      call('POST', `${base()}/function-runs/${id}/rerun`, { token: t, body: {} });
    expect(await rerun('not-a-run')).toMatchObject({
      status: 400,
      body: { error: 'Invalid run ID.', statusCode: 400 },
    });
    expect(await rerun('00000000-0000-4000-8000-000000000000')).toMatchObject({
      status: 400,
      body: { error: 'Original run not found.' },
    });
    const trigger = await createTrigger({ name: 'soon-gone' });
    const job = (await call('POST', `${base()}/function-triggers/${trigger.body.id}/execute`, { token, body: {} }))
      .body;
    const run = await finished(job);
    // Another workspace is told the run is not its own, as the spec's table says (nothing of it is read).
    const foreign = await call(
      'POST',
      `${stack.baseUrl}/data/workspace/${otherWs}/api/v1/function-runs/${run.id}/rerun`,
      {
        token: otherToken,
        body: {},
      },
    );
    expect(foreign).toMatchObject({ status: 400, body: { error: 'Run does not belong to this workspace.' } });
    const foreignHistory = await call(
      'GET',
      `${stack.baseUrl}/data/workspace/${otherWs}/api/v1/function-runs/${run.id}/rerun-history`,
      { token: otherToken },
    );
    expect(foreignHistory).toMatchObject({ status: 400, body: { error: 'Run does not belong to this workspace.' } });
    expect(JSON.stringify(foreignHistory.body)).not.toContain(trigger.body.id);
    const reader = await serviceAccountToken(stack, ws, token, {
      name: `rerun-reader-${suffix}`,
      resource: 'function-runs',
      actions: ['retrieve', 'list'],
    });
    expect((await rerun(run.id, reader)).status).toBe(403);
    await call('DELETE', `${base()}/function-triggers/${trigger.body.id}`, { token });
    expect(await rerun(run.id)).toMatchObject({
      status: 400,
      body: { error: 'Original trigger not found. It may have been deleted.' },
    });
  });
});
