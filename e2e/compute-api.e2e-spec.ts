import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

let stack: Stack;
const suffix = Date.now().toString(36);
const ws = `fnapi-${suffix}`;
const otherWs = `fnapi-other-${suffix}`;
let token: string;
let otherToken: string;
let orders: { id: string; recordSlug: string };
let otherRecordId: string;

const base = (workspace = ws) => `${stack.baseUrl}/data/workspace/${workspace}/api/v1`;
const iam = (workspace = ws) => `${stack.authUrl}/workspace/${workspace}/api/v1`;

beforeAll(async () => {
  stack = await startStack();
  await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2' });
  token = await adminWorkspaceToken(stack, ws);
  otherToken = await adminWorkspaceToken(stack, otherWs);
  const created = await call('POST', `${base()}/structures`, {
    token,
    body: {
      name: 'Orders',
      recordSlug: 'orders',
      properties: [
        { name: 'sku', type: 'string', required: true },
        { name: 'qty', type: 'number' },
      ],
    },
  });
  expect(created.status).toBeLessThan(300);
  orders = created.body;
  const theirs = await call('POST', `${base(otherWs)}/structures`, {
    token: otherToken,
    body: { name: 'Orders', recordSlug: 'orders', properties: [{ name: 'sku', type: 'string' }] },
  });
  const theirRecord = await call('POST', `${base(otherWs)}/records`, {
    token: otherToken,
    body: { structureId: theirs.body.id, data: { sku: 'secret-of-b' } },
  });
  otherRecordId = theirRecord.body.id;
});

afterAll(async () => {
  await stack?.stop();
});

/** Runs code through the test endpoint and answers its finished run. */
async function run(code: string, params: unknown = {}, workspace = ws, t = token): Promise<Record<string, any>> {
  const queued = await call('POST', `${base(workspace)}/compute-functions/test`, { token: t, body: { code, params } });
  expect(queued.status).toBe(200);
  const until = Date.now() + 45_000;
  for (;;) {
    const listed = await call('GET', `${base(workspace)}/function-runs?jobId=${queued.body.jobId}`, { token: t });
    const r = listed.body.runs[0];
    if (r && !['queued', 'running'].includes(r.status)) {
      return (await call('GET', `${base(workspace)}/function-runs/${r.id}`, { token: t })).body;
    }
    if (Date.now() > until) throw new Error(`run not final: ${JSON.stringify(r)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('api inside a function: records through the data service, as the function principal', () => {
  it('creates, fetches, updates and queries records', async () => {
    const r = await run(
      `async function run() {
      const created = await api.createRecord('orders', { sku: 'A-1', qty: 1 });
      const byId = await api.createRecord(executionParams.structureId, { sku: 'A-2', qty: 2 });
      const fetched = await api.fetchRecord(created.id);
      const missing = await api.fetchRecord('00000000-0000-4000-8000-000000000000');
      const updated = await api.updateRecord(created.id, { qty: 5 });
      const queried = await api.queryRecords({ resource: 'orders', where: { 'data.qty': { gte: 2 } }, sort: [{ field: 'data.sku', direction: 'asc' }] });
      const legacy = await api.queryRecords('orders', { filter: { sku: 'A-2' } });
      return { success: true, data: {
        created: created.data, byId: byId.data.sku, fetched: fetched.data.sku, missing,
        updated: updated.data.qty,
        queried: queried.data.map((x) => x.data.sku), meta: typeof queried.meta,
        legacy: legacy.data.map((x) => x.data.sku),
      } };
    }`,
      { structureId: orders.id },
    );
    expect(r.status).toBe('succeeded');
    expect(r.result.data).toEqual({
      created: { sku: 'A-1', qty: 1 },
      byId: 'A-2',
      fetched: 'A-1',
      missing: null,
      updated: 5,
      queried: ['A-1', 'A-2'],
      meta: 'object',
      legacy: ['A-2'],
    });
    const methods = r.apiCalls.map((c: { method: string }) => c.method);
    expect(methods).toEqual([
      'createRecord',
      'createRecord',
      'fetchRecord',
      'fetchRecord',
      'updateRecord',
      'queryRecords',
      'queryRecords',
    ]);
    for (const c of r.apiCalls) expect(c).toMatchObject({ ok: true, durationMs: expect.any(Number) });
    expect(r.apiCalls[6].deprecated).toContain('deprecated');
    // The writes are real records, made by the function principal.
    const listed = await call('GET', `${base()}/records/slug/orders?filter=sku:A-1`, { token });
    expect(listed.body.results).toHaveLength(1);
    expect(listed.body.results[0].createdBy).toMatch(/^ci_functions_/);
  });

  it('creates many records in bulk and in a batch, and executes saved queries', async () => {
    const saved = await call('POST', `${base()}/saved-queries`, {
      token,
      body: {
        name: 'by-qty',
        query: { resource: 'orders', where: { 'data.qty': { eq: '${qty}' } } },
        variables: { qty: { type: 'number' } },
      },
    });
    expect(saved.status).toBe(201);
    const r = await run(
      `async function run() {
      const bulk = await api.bulkCreateRecords('orders', [{ sku: 'B-1', qty: 9 }, { data: { sku: 'B-2', qty: 9 } }]);
      const batch = await api.batchCreateRecords('orders', [{ sku: 'C-1', qty: 9 }]);
      const found = await api.executeSavedQuery(executionParams.saved, { qty: 9 });
      return { success: true, data: { bulk: bulk.created, batch: batch.created, found: found.data.length, meta: 'total' in found.meta || 'limit' in found.meta } };
    }`,
      { saved: saved.body.id },
    );
    expect(r).toMatchObject({ status: 'succeeded', result: { data: { bulk: 2, batch: 1, found: 3, meta: true } } });
  });

  it("turns the data service's refusals into errors the function can catch", async () => {
    const r = await run(`async function run() {
      const errors = [];
      for (const attempt of [
        () => api.createRecord('orders', { qty: 'many' }),
        () => api.createRecord('no-such-collection', { sku: 'x' }),
        () => api.updateRecord('00000000-0000-4000-8000-000000000000', { qty: 1 }),
        () => api.createRecord('orders'),
        () => api.fetchRecord(42),
      ]) {
        try { await attempt(); errors.push('no error'); } catch (e) { errors.push(e.message); }
      }
      return { success: true, data: errors };
    }`);
    expect(r.status).toBe('succeeded');
    const [invalid, unknown, missing, noData, badId] = r.result.data as string[];
    expect(invalid).toMatch(/^400: /);
    expect(unknown).toMatch(/^404: /);
    expect(missing).toMatch(/^404: /);
    expect(noData).toBe('data must be an object');
    expect(badId).toBe('recordId must be a non-empty string');
    expect(r.apiCalls.every((c: { ok: boolean }) => !c.ok)).toBe(true);
  });

  it("never reaches another workspace's records", async () => {
    const r = await run(
      `async function run() {
      const direct = await api.fetchRecord(executionParams.theirs);
      const queried = await api.queryRecords({ resource: 'orders', where: { id: { eq: executionParams.theirs } } });
      let update;
      try { await api.updateRecord(executionParams.theirs, { sku: 'stolen' }); update = 'updated'; } catch (e) { update = e.message; }
      return { success: true, data: { direct, queried: queried.data.length, update } };
    }`,
      { theirs: otherRecordId },
    );
    expect(r.result.data).toEqual({ direct: null, queried: 0, update: expect.stringMatching(/^404: /) });
    const theirs = await call('GET', `${base(otherWs)}/records/${otherRecordId}`, { token: otherToken });
    expect(theirs.body.data.sku).toBe('secret-of-b');
  });

  it("is restricted like any service account: the administrator changes the principal's group", async () => {
    const groups = await call('GET', `${iam()}/groups`, { token });
    const group = (groups.body.data ?? groups.body).find((g: { name: string }) => g.name === 'compute-functions');
    expect(group).toBeDefined();
    const accounts = await call('GET', `${iam()}/service-accounts`, { token });
    const principal = (accounts.body.data ?? accounts.body).find((a: { clientId: string }) =>
      a.clientId.startsWith('ci_functions_'),
    );
    expect(principal).toMatchObject({ name: 'compute-functions', status: 'active' });
    // Its secret follows the shared key: it cannot be rotated through the API.
    expect((await call('POST', `${iam()}/service-accounts/${principal.id}/rotate`, { token })).status).toBe(400);

    const detail = await call('GET', `${iam()}/groups/${group.id}`, { token });
    const recordsPolicy = detail.body.policies.find((p: { resource: string }) => p.resource === 'records');
    const cut = await call('PUT', `${iam()}/groups/${group.id}/policies/${recordsPolicy.id}`, {
      token,
      body: { actions: ['retrieve', 'list'] },
    });
    expect(cut.status).toBe(200);
    // Permissions reach the data service within its cache time: poll until a write is refused.
    const until = Date.now() + 30_000;
    for (;;) {
      const r = await run(`async function run() {
        try { await api.createRecord('orders', { sku: 'after-cut' }); return { success: true, data: 'written' }; }
        catch (e) { return { success: true, data: e.message }; }
      }`);
      if (String(r.result.data).startsWith('403: ')) break;
      if (Date.now() > until) throw new Error(`writes still allowed: ${JSON.stringify(r.result)}`);
    }
    const read = await run(
      `async function run() { return { success: true, data: (await api.queryRecords({ resource: 'orders' })).data.length > 0 }; }`,
    );
    expect(read.result.data).toBe(true);
  });
});
