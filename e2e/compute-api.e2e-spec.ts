import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '@strata/testing';
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
/** A local HTTP server functions call: it echoes what it received as JSON. */
let receiver: Server;
let receiverPort: number;
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
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(2 * 1024 * 1024));
        return;
      }
      if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }).end();
        return;
      }
      res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          method: req.method,
          url: req.url,
          contentType: req.headers['content-type'] ?? null,
          auth: req.headers['authorization'] ?? null,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverPort = (receiver.address() as AddressInfo).port;
  stack = await startStack();
  // Loopback is refused unless allowed: this worker may reach the local receiver.
  worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2', COMPUTE_FETCH_ALLOW_PRIVATE: 'true' });
  token = await adminWorkspaceToken(stack, ws);
  otherToken = await adminWorkspaceToken(stack, otherWs);
  const notes = await call('POST', `${base()}/structures`, {
    token,
    body: {
      name: 'Notes',
      recordSlug: 'notes',
      properties: [
        { name: 'title', type: 'string' },
        { name: 'data', type: 'object' },
      ],
    },
  });
  expect(notes.status).toBeLessThan(300);
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
  await new Promise<void>((resolve) => {
    receiver.closeAllConnections();
    receiver.close(() => resolve());
  });
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
      const versioned = await api.updateRecord(created.id, { qty: 6 }, { createVersion: true });
      const queried = await api.queryRecords({ resource: 'orders', where: { 'data.qty': { gte: 2 } }, sort: [{ field: 'data.sku', direction: 'asc' }] });
      const legacy = await api.queryRecords('orders', { filter: { sku: 'A-2' } });
      return { success: true, data: {
        created: created.data, byId: byId.data.sku, fetched: fetched.data.sku, missing,
        updated: updated.data.qty, versioned: versioned.data.qty, id: created.id,
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
      versioned: 6,
      id: expect.any(String),
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
      'updateRecord',
      'queryRecords',
      'queryRecords',
    ]);
    for (const c of r.apiCalls) expect(c).toMatchObject({ ok: true, durationMs: expect.any(Number) });
    expect(r.apiCalls[7].deprecated).toContain('deprecated');
    // The options reached the data service: the update with createVersion kept a version.
    const history = await call('GET', `${base()}/records/${r.result.data.id}/history`, { token });
    expect(history.status).toBe(200);
    expect(history.body.versions.length).toBeGreaterThan(0);
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
        () => api.queryRecords('orders', { filter: 'qty>5' }),
      ]) {
        try { await attempt(); errors.push('no error'); } catch (e) { errors.push(e.message); }
      }
      return { success: true, data: errors };
    }`);
    expect(r.status).toBe('succeeded');
    const [invalid, unknown, missing, noData, badId, badFilter] = r.result.data as string[];
    // The data service's reasons come with its status, by field.
    expect(invalid).toMatch(/^400: .* \(.*data\.qty: must be a number\)$/);
    expect(badFilter).toMatch(/^400: .* \(filter: .+\)$/);
    expect(badFilter).not.toContain('filter: filter:');
    expect(unknown).toMatch(/^404: /);
    expect(missing).toMatch(/^404: /);
    expect(noData).toBe('data must be an object');
    expect(badId).toBe('recordId must be a non-empty string');
    expect(r.apiCalls.every((c: { ok: boolean }) => !c.ok)).toBe(true);
  });

  it('reads the deprecated query form and bulk records as written, and refuses what it would misread', async () => {
    const r = await run(
      `async function run() {
      const made = await api.createRecord('orders', { sku: 'L-1', qty: 7 });
      const nulls = await api.fetchRecord(made.id, { version: null, expand: null });
      const byId = await api.queryRecords(executionParams.structureId, { filter: { sku: 'L-1' } });
      const refused = [];
      for (const attempt of [
        () => api.queryRecords('orders', { where: { 'data.sku': 'L-1' } }),
        () => api.queryRecords('orders', { filter: ['sku:L-1'] }),
        () => api.queryRecords('orders', { filter: { 'sku:x,qty': 1 } }),
        () => api.hmacSha256('k', 123),
        () => api.queryRecords('orders', { filter: 'sku:' + 'x'.repeat(100000) }),
      ]) {
        try { await attempt(); refused.push('no error'); } catch (e) { refused.push(e.message); }
      }
      const empty = await api.queryRecords('orders', { filter: {}, limit: 1 });
      const signed = await api.hmacSha256('k', '');
      // A record with its own field named data beside others is a record, not a {data} wrapper.
      const bulk = await api.bulkCreateRecords('notes', [{ title: 't', data: { x: 1 } }, { data: { title: 'w' } }]);
      return { success: true, data: { nulls: nulls.data.sku, byId: byId.data.map((x) => x.data.qty), refused, empty: empty.data.length, signed, bulk: bulk.records.map((x) => x.data) } };
    }`,
      { structureId: orders.id },
    );
    expect(r.status).toBe('succeeded');
    const { nulls, byId, refused, empty, signed, bulk } = r.result.data;
    expect(nulls).toBe('L-1');
    expect(byId).toEqual([7]);
    expect(refused[0]).toMatch(/^queryRecords\(collection, options\) takes filter, sort, limit, offset; not where/);
    expect(refused[1]).toBe('options.filter must be a filter string or an object of field values');
    expect(refused[2]).toBe("options.filter: 'sku:x,qty' is not a field name");
    expect(refused[3]).toBe('message must be a string');
    // Too long for a URL: said so, with the way out, instead of the data service's bare 431.
    expect(refused[4]).toMatch(/^options are too long for queryRecords\(collection, options\).*canonical definition/);
    expect(empty).toBe(1);
    expect(signed).toMatch(/^[0-9a-f]{64}$/);
    expect(bulk).toEqual([{ title: 't', data: { x: 1 } }, { title: 'w' }]);
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

    // api.invokeTrigger is served by the worker itself, and bound by the same policies: allowed by the
    // group's function-triggers policy, refused once it is removed.
    const target = await call('POST', `${base()}/compute-functions`, {
      token,
      body: { name: 'invoked', code: 'async function run() { return { success: true }; }' },
    });
    const onDemand = await call('POST', `${base()}/function-triggers`, {
      token,
      body: { name: 'invoked-by-hand', functionId: target.body.id, executionType: 'on-demand' },
    });
    const invoke = `async function run() {
      try { return { success: true, data: (await api.invokeTrigger(executionParams.id)).jobId ? 'started' : 'no job' }; }
      catch (e) { return { success: true, data: e.message }; }
    }`;
    expect((await run(invoke, { id: onDemand.body.id })).result.data).toBe('started');
    const triggersPolicy = detail.body.policies.find((p: { resource: string }) => p.resource === 'function-triggers');
    expect(triggersPolicy).toMatchObject({ actions: ['execute'] });
    const removed = await call('DELETE', `${iam()}/groups/${group.id}/policies/${triggersPolicy.id}`, { token });
    expect(removed.status).toBeLessThan(300);
    const refused = await eventually(async () => {
      const r = await run(invoke, { id: onDemand.body.id });
      return String(r.result.data).startsWith('403: ') ? String(r.result.data) : undefined;
    }, 30_000);
    expect(refused).toMatch(/^403: Missing permission: function-triggers:execute/);
  });

  it('tells functions when the principal is revoked, as a refusal, not a platform failure', async () => {
    const revokedWs = `fnapi-revoked-${suffix}`;
    const revokedToken = await adminWorkspaceToken(stack, revokedWs);
    const accounts = await call('GET', `${iam(revokedWs)}/service-accounts`, { token: revokedToken });
    const principal = (accounts.body.data ?? accounts.body).find((a: { clientId: string }) =>
      a.clientId.startsWith('ci_functions_'),
    );
    const revoked = await call('POST', `${iam(revokedWs)}/service-accounts/${principal.id}/revoke`, {
      token: revokedToken,
    });
    expect(revoked.status).toBeLessThan(300);
    const message = await eventually(async () => {
      const r = await run(
        `async function run() {
          try { await api.fetchRecord('00000000-0000-4000-8000-000000000000'); return { success: true, data: 'read' }; }
          catch (e) { return { success: true, data: e.message }; }
        }`,
        {},
        revokedWs,
        revokedToken,
      );
      return String(r.result.data).startsWith('401: ') ? String(r.result.data) : undefined;
    }, 30_000);
    expect(message).toMatch(/^401: the workspace's function principal \(ci_functions_.*\) is refused tokens/);
  });
});

describe('the allowed-domains list', () => {
  const domains = (workspace = ws) => `${base(workspace)}/compute-functions/allowed-domains`;

  it('adds, lists and removes domains, normalised, with one details entry for a bad one', async () => {
    const added = await call('POST', domains(), { token, body: { domain: 'API.Example.com' } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ domain: 'api.example.com', createdBy: expect.any(String) });
    expect((await call('POST', domains(), { token, body: { domain: '*.hooks.example.org' } })).status).toBe(201);
    expect(await call('POST', domains(), { token, body: { domain: 'api.example.com' } })).toMatchObject({
      status: 409,
      body: { error: "Domain 'api.example.com' is already allowed.", statusCode: 409 },
    });
    for (const bad of ['10.0.0.1', 'https://x.example.com', 'x.example.com:8443', 'intranet', '', 'a..com']) {
      const res = await call('POST', domains(), { token, body: { domain: bad } });
      expect({ bad, status: res.status, field: res.body.details?.[0]?.field }).toEqual({
        bad,
        status: 400,
        field: 'domain',
      });
    }
    const listed = await call('GET', domains(), { token });
    expect(listed.body.domains.map((d: { domain: string }) => d.domain)).toEqual([
      '*.hooks.example.org',
      'api.example.com',
    ]);
    expect((await call('DELETE', `${domains()}/api.example.com`, { token })).status).toBe(200);
    expect((await call('DELETE', `${domains()}/api.example.com`, { token })).status).toBe(404);
    expect(await call('DELETE', `${domains()}/a..com`, { token })).toMatchObject({
      status: 400,
      body: { details: [{ field: 'domain', message: expect.stringMatching(/not a valid host name/) }] },
    });
    // Another workspace's list is its own.
    expect((await call('GET', domains(otherWs), { token: otherToken })).body.domains).toEqual([]);
  });

  it('needs compute-functions:manage to change, list to read', async () => {
    const editor = await serviceAccountToken(stack, ws, token, {
      name: `fn-editor-${suffix}`,
      resource: 'compute-functions',
      actions: ['create', 'update', 'list', 'retrieve'],
    });
    expect((await call('GET', domains(), { token: editor })).status).toBe(200);
    expect((await call('POST', domains(), { token: editor, body: { domain: 'evil.example.net' } })).status).toBe(403);
  });
});

describe('api.fetch and api.httpPost', () => {
  beforeAll(async () => {
    expect(
      (await call('POST', `${base()}/compute-functions/allowed-domains`, { token, body: { domain: 'localhost' } }))
        .status,
    ).toBe(201);
  });

  it('calls allowed domains, sends JSON bodies and headers, and answers status, headers, body and json', async () => {
    const r = await run(
      `async function run() {
      const got = await api.fetch(executionParams.url + '/thing?q=1', { headers: { authorization: 'Bearer t' } });
      const posted = await api.httpPost(executionParams.url + '/hook', { hello: 'world' });
      const missing = await api.fetch(executionParams.url + '/missing', { method: 'DELETE' });
      const bare = await api.httpPost(executionParams.url + '/bare');
      return { success: true, data: { got: got.json, status: got.status, ok: got.ok, posted: posted.json, missing: [missing.status, missing.ok], bare: bare.json } };
    }`,
      { url: `http://localhost:${receiverPort}` },
    );
    expect(r.status).toBe('succeeded');
    expect(r.result.data).toEqual({
      got: { method: 'GET', url: '/thing?q=1', contentType: null, auth: 'Bearer t', body: '' },
      status: 200,
      ok: true,
      posted: { method: 'POST', url: '/hook', contentType: 'application/json', auth: null, body: '{"hello":"world"}' },
      missing: [404, false],
      // No body given, none sent.
      bare: { method: 'POST', url: '/bare', contentType: null, auth: null, body: '' },
    });
    expect(r.apiCalls.map((c: { method: string }) => c.method)).toEqual(['fetch', 'httpPost', 'fetch', 'httpPost']);
  });

  it('refuses domains not on the list, literal addresses, redirects it will not follow, and huge answers', async () => {
    const r = await run(
      `async function run() {
      const out = [];
      for (const url of [
        'http://127.0.0.1:' + executionParams.port + '/x',
        'http://elsewhere.example.com/x',
        'http://localhost.evil.example/x',
        'ftp://localhost/x',
        'http://user:pw@localhost:' + executionParams.port + '/x',
      ]) {
        try { await api.fetch(url); out.push('fetched'); } catch (e) { out.push(e.message); }
      }
      const own = 'http://localhost:' + executionParams.port + '/x';
      try { await api.fetch(own, { headers: { Host: 'internal.example' } }); out.push('fetched'); } catch (e) { out.push(e.message); }
      try { await api.fetch(own, { method: 1, body: 'x' }); out.push('fetched'); } catch (e) { out.push(e.message); }
      const redirect = await api.fetch('http://localhost:' + executionParams.port + '/redirect');
      let big;
      try { await api.fetch('http://localhost:' + executionParams.port + '/big'); big = 'read'; } catch (e) { big = e.message; }
      return { success: true, data: { out, redirect: redirect.status, big } };
    }`,
      { port: receiverPort },
    );
    const { out, redirect, big } = r.result.data;
    expect(out[0]).toContain("127.0.0.1 is not on the workspace's allowed domains");
    expect(out[1]).toContain('elsewhere.example.com is not on');
    expect(out[2]).toContain('is not on');
    expect(out[3]).toBe('url must be an absolute http or https URL');
    expect(out[4]).toContain('credentials in the URL');
    expect(out[5]).toMatch(/^the Host header is the URL's host/);
    expect(out[6]).toBe('method must be a string, one of GET, HEAD, POST, PUT, PATCH, DELETE');
    // A redirect is an answer; nothing followed it to the metadata address.
    expect(redirect).toBe(302);
    expect(big).toContain('larger than');
  });

  it('stores JSON documents with storeAsJSON, readable on the run until they expire', async () => {
    const r = await run(`async function run() {
      const first = await api.storeAsJSON('report', { total: 3, items: [1, 2, 3] });
      const second = await api.storeAsJSON({ unnamed: true });
      let tooLong;
      try { await api.storeAsJSON('x'.repeat(201), 1); } catch (e) { tooLong = e.message; }
      return { success: true, data: { first, second, tooLong } };
    }`);
    expect({ status: r.status, error: r.error }).toEqual({ status: 'succeeded', error: null });
    const { first, second, tooLong } = r.result.data;
    expect(first).toMatchObject({
      id: expect.any(String),
      name: 'report',
      sizeBytes: 27,
      expiresAt: expect.any(String),
    });
    expect(second.name).toBe('document');
    expect(tooLong).toContain('name must be');
    const listed = await call('GET', `${base()}/function-runs/${r.id}/documents`, { token });
    expect(listed.status).toBe(200);
    expect(listed.body.documents.map((d: { name: string }) => d.name)).toEqual(['report', 'document']);
    expect(listed.body.documents[0]).not.toHaveProperty('content');
    const doc = await call('GET', `${base()}/function-runs/${r.id}/documents/${first.id}`, { token });
    expect(doc.body).toMatchObject({ name: 'report', content: { total: 3, items: [1, 2, 3] } });
    // Not readable from another workspace.
    expect(
      (await call('GET', `${base(otherWs)}/function-runs/${r.id}/documents/${first.id}`, { token: otherToken })).status,
    ).toBe(404);
  });

  it('keeps to the per-run document cap', async () => {
    const r = await run(`async function run() {
      const results = [];
      for (let i = 0; i < 22; i++) {
        try { await api.storeAsJSON('d' + i, i); results.push('ok'); } catch (e) { results.push(e.message); }
      }
      return { success: true, data: results };
    }`);
    const results = r.result.data as string[];
    expect(results.filter((x) => x === 'ok')).toHaveLength(20);
    expect(results[21]).toContain('at most 20 documents');
  });

  it('keeps to the per-run document caps when the calls are made at once', async () => {
    // 26 calls in flight together (under the 32 a run may have pending): the count cap holds.
    const counted = await run(`async function run() {
      const settled = await Promise.allSettled(Array.from({ length: 26 }, (_, i) => api.storeAsJSON('d' + i, i)));
      return { success: true, data: settled.map((s) => s.status) };
    }`);
    expect((counted.result.data as string[]).filter((status) => status === 'fulfilled')).toHaveLength(20);
    // Eight documents of 900 KB at once against the 5 MiB a run may keep: five fit, never more.
    const sized = await run(`async function run() {
      const big = 'x'.repeat(900 * 1024);
      const settled = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => api.storeAsJSON('big' + i, big)));
      return { success: true, data: settled.map((s) => s.status) };
    }`);
    expect((sized.result.data as string[]).filter((status) => status === 'fulfilled')).toHaveLength(5);
    const listed = await call('GET', `${base()}/function-runs/${sized.id}/documents`, { token });
    const total = listed.body.documents.reduce((sum: number, d: { sizeBytes: number }) => sum + d.sizeBytes, 0);
    expect(total).toBeLessThanOrEqual(5 * 1024 * 1024);
  });

  it('ends a run that waits on nothing, and caps the api calls of a run', async () => {
    const waits = await run('async function run() { await api.hmacSha256("k", "v"); await new Promise(() => {}); }');
    expect(waits).toMatchObject({ status: 'failed', error: { name: 'NeverSettled' } });
    const many = await run(`async function run() {
      let refused;
      for (let i = 0; i < 1001 && !refused; i++) {
        try { await api.hmacSha256('k', String(i)); } catch (e) { refused = { at: i, message: e.message }; }
      }
      return { success: true, data: refused ?? null };
    }`);
    expect(many.result.data).toEqual({ at: 1000, message: 'api.hmacSha256: a run makes at most 1000 api calls' });
  });

  it('refuses loopback and private destinations when the worker does not allow them', async () => {
    const guarded = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '1' });
    await worker.stop();
    const r = await run(
      `async function run() {
      try { await api.fetch('http://localhost:' + executionParams.port + '/x'); return { success: true, data: 'fetched' }; }
      catch (e) { return { success: true, data: e.message }; }
    }`,
      { port: receiverPort },
    );
    expect(r.result.data).toMatch(/refused|loopback|not a public/);
    await guarded.stop();
    worker = await stack.startWorker({ COMPUTE_WORKER_ISOLATES: '2', COMPUTE_FETCH_ALLOW_PRIVATE: 'true' });
  });
});
