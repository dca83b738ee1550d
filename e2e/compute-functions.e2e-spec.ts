import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { adminWorkspaceToken, call, serviceAccountToken, startStack, type Stack } from '@strata/testkit';

let stack: Stack;
const suffix = Date.now().toString(36);
const ws = `fn-${suffix}`;
const otherWs = `fn-other-${suffix}`;
let token: string;
let otherToken: string;

beforeAll(async () => {
  stack = await startStack();
  token = await adminWorkspaceToken(stack, ws);
  otherToken = await adminWorkspaceToken(stack, otherWs);
});

afterAll(async () => {
  await stack?.stop();
});

const base = (workspace = ws) => `${stack.baseUrl}/data/workspace/${workspace}/api/v1`;
const CODE = 'async function run() { return { success: true, data: executionParams }; }';
const create = (name: string, extra: Record<string, unknown> = {}, t = token) =>
  call('POST', `${base()}/compute-functions`, { token: t, body: { name, code: CODE, ...extra } });

describe('compute functions', () => {
  it('creates, reads, lists without code, updates with a version per save, and deletes', async () => {
    const created = await create('greet', { description: 'says hello' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.any(String),
      name: 'greet',
      description: 'says hello',
      code: CODE,
      workspaceSlug: ws,
      version: 1,
      codeHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      createdBy: expect.any(String),
      updatedBy: expect.any(String),
    });
    const id = created.body.id as string;
    expect((await call('GET', `${base()}/compute-functions/${id}`, { token })).body).toEqual(created.body);

    const listed = await call('GET', `${base()}/compute-functions`, { token });
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ total: 1, page: 1, limit: 500 });
    expect(listed.body.functions[0]).toMatchObject({ id, name: 'greet' });
    expect(listed.body.functions[0]).not.toHaveProperty('code');

    const newCode = 'async function run() { return { success: true, data: 2 }; }';
    const updated = await call('PUT', `${base()}/compute-functions/${id}`, { token, body: { code: newCode } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ version: 2, code: newCode, name: 'greet', description: 'says hello' });
    expect(updated.body.codeHash).not.toBe(created.body.codeHash);
    const renamed = await call('PUT', `${base()}/compute-functions/${id}`, {
      token,
      body: { name: 'greet2', description: null },
    });
    expect(renamed.body).toMatchObject({ version: 3, name: 'greet2', description: null, code: newCode });

    const versions = await call('GET', `${base()}/compute-functions/${id}/versions`, { token });
    expect(versions.status).toBe(200);
    expect(versions.body.versions.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    expect(versions.body.versions[2]).toMatchObject({ name: 'greet', codeHash: created.body.codeHash });
    expect(versions.body.versions[0]).not.toHaveProperty('code');
    const first = await call('GET', `${base()}/compute-functions/${id}/versions/1`, { token });
    expect(first.body).toMatchObject({ version: 1, code: CODE, name: 'greet', description: 'says hello' });
    expect((await call('GET', `${base()}/compute-functions/${id}/versions/9`, { token })).status).toBe(404);
    expect(await call('GET', `${base()}/compute-functions/${id}/versions/abc`, { token })).toMatchObject({
      status: 400,
      body: { error: "Invalid version 'abc': expected a positive integer" },
    });

    const deleted = await call('DELETE', `${base()}/compute-functions/${id}`, { token });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, message: 'Function deleted.' });
    expect((await call('GET', `${base()}/compute-functions/${id}`, { token })).body).toEqual({
      error: 'Function not found.',
      statusCode: 404,
    });
    expect((await call('DELETE', `${base()}/compute-functions/${id}`, { token })).status).toBe(404);
    // The name is free again.
    expect((await create('greet2')).status).toBe(201);
  });

  it("answers the spec's messages in the functions error shape", async () => {
    expect(await call('POST', `${base()}/compute-functions`, { token, body: { code: CODE } })).toMatchObject({
      status: 400,
      body: { error: 'Function name is required.', statusCode: 400, details: [{ field: 'name' }] },
    });
    expect(
      (await call('POST', `${base()}/compute-functions`, { token, body: { name: '  ', code: CODE } })).body,
    ).toMatchObject({
      error: 'Function name is required.',
    });
    // A value of the wrong type is not a missing one.
    expect(
      await call('POST', `${base()}/compute-functions`, { token, body: { name: 123, code: ['x'] } }),
    ).toMatchObject({
      status: 400,
      body: {
        details: [
          { field: 'name', message: 'Function name must be a string.' },
          { field: 'code', message: 'Function code must be a string.' },
        ],
      },
    });
    expect((await create('dup')).status).toBe(201);
    expect(await create('dup')).toMatchObject({
      status: 409,
      body: { error: 'Function with that name already exists.', statusCode: 409 },
    });
    const other = await create('other');
    expect(
      await call('PUT', `${base()}/compute-functions/${other.body.id}`, { token, body: { name: 'dup' } }),
    ).toMatchObject({ status: 409, body: { error: 'Function with that name already exists.' } });
    expect(await call('GET', `${base()}/compute-functions/not-a-uuid`, { token })).toMatchObject({ status: 400 });
    expect(
      await call('GET', `${base()}/compute-functions/00000000-0000-4000-8000-000000000000`, { token }),
    ).toMatchObject({ status: 404, body: { error: 'Function not found.', statusCode: 404 } });
    // Every bad field at once.
    const many = await call('POST', `${base()}/compute-functions`, {
      token,
      body: { name: 7, code: '', description: 5, extra: true },
    });
    expect(many.status).toBe(400);
    expect(many.body.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'code',
      'description',
      'extra',
      'name',
    ]);
    expect(await call('PUT', `${base()}/compute-functions/${other.body.id}`, { token, body: {} })).toMatchObject({
      status: 400,
    });
  });

  it('checks code at save: syntax errors with line and column, legacy forms refused', async () => {
    const syntax = await create('broken', { code: 'async function run() {\n  return {;\n}' });
    expect(syntax.status).toBe(400);
    expect(syntax.body.error).toMatch(/line 2, column \d+/);
    const legacy = await create('legacy', { code: 'exports.handler = async () => 1;' });
    expect(legacy.status).toBe(400);
    expect(legacy.body.error).toContain('async function run()');
    const moduleExports = await create('legacy2', { code: 'module.exports = async function () {};' });
    expect(moduleExports.status).toBe(400);
    expect(moduleExports.body.error).toContain('async function run()');
    expect((await create('norun', { code: 'const x = 1;' })).status).toBe(400);
    const ok = await create('fine');
    const bad = await call('PUT', `${base()}/compute-functions/${ok.body.id}`, {
      token,
      body: { code: 'function run() {' },
    });
    expect(bad.status).toBe(400);
    // Nothing was saved by the refused update.
    expect((await call('GET', `${base()}/compute-functions/${ok.body.id}`, { token })).body.version).toBe(1);
    // The code's error comes with the body's other bad fields, one entry each.
    const both = await call('POST', `${base()}/compute-functions/test`, {
      token,
      body: { code: 'async function run( {' },
    });
    expect(both.status).toBe(400);
    expect(both.body.details).toEqual([
      { field: 'code', message: expect.stringMatching(/line 1, column \d+/) },
      { field: 'params', message: 'params is required and must be an object.' },
    ]);
    const named = await create('', { code: 'exports.handler = async () => 1;' });
    expect(named.body.details.map((d: { field: string }) => d.field)).toEqual(['name', 'code']);
  });

  it('lists with search, searchField, limit, page and sort, and refuses bad list parameters', async () => {
    for (const name of ['list-alpha', 'list-beta', 'list-gamma']) {
      expect((await create(name, { description: `the ${name} one` })).status).toBe(201);
    }
    const searched = await call(
      'GET',
      `${base()}/compute-functions?search=list-&sort=${encodeURIComponent('[{"field":"name","direction":"desc"}]')}&limit=2&page=1`,
      { token },
    );
    expect(searched.status).toBe(200);
    expect(searched.body).toMatchObject({ total: 3, page: 1, limit: 2 });
    expect(searched.body.functions.map((f: { name: string }) => f.name)).toEqual(['list-gamma', 'list-beta']);
    const page2 = await call(
      'GET',
      `${base()}/compute-functions?search=list-&sort=${encodeURIComponent('[{"field":"name","direction":"desc"}]')}&limit=2&page=2`,
      { token },
    );
    expect(page2.body.functions.map((f: { name: string }) => f.name)).toEqual(['list-alpha']);
    const byDescription = await call('GET', `${base()}/compute-functions?search=beta%20one&searchField=description`, {
      token,
    });
    expect(byDescription.body.functions.map((f: { name: string }) => f.name)).toEqual(['list-beta']);
    // LIKE wildcards are literal.
    expect((await call('GET', `${base()}/compute-functions?search=%25`, { token })).body.total).toBe(0);

    for (const query of [
      'limit=1001',
      'limit=0',
      'page=0',
      'page=1e20',
      'searchField=code',
      'sort=name',
      'sort=%5B%7B%22field%22%3A%22code%22%7D%5D',
      'sort=%7B%7D',
    ]) {
      const res = await call('GET', `${base()}/compute-functions?${query}`, { token });
      expect({ query, status: res.status, shape: Object.keys(res.body).sort() }).toEqual({
        query,
        status: 400,
        shape: ['details', 'error', 'statusCode'],
      });
    }
    // Every bad parameter is one entry, a bad sort beside the others.
    for (const [query, fields] of [
      ['limit=abc&page=-1&sort=notjson', ['limit', 'page', 'sort']],
      ['sort=notjson&searchField=zzz', ['searchField', 'sort']],
      [`sort=${encodeURIComponent('[{"field":"code"}]')}&page=0`, ['page', 'sort']],
    ] as const) {
      const res = await call('GET', `${base()}/compute-functions?${query}`, { token });
      expect({ query, fields: res.body.details?.map((d: { field: string }) => d.field).sort() }).toEqual({
        query,
        fields,
      });
    }
    // One message for a number out of range or not a number at all.
    const notANumber = await call('GET', `${base()}/compute-functions?limit=abc`, { token });
    expect(notANumber.body.details).toEqual([{ field: 'limit', message: 'limit must be an integer from 1 to 1000' }]);
    const unknownField = await call(
      'GET',
      `${base()}/compute-functions?sort=${encodeURIComponent('[{"field":"code"}]')}`,
      {
        token,
      },
    );
    expect(unknownField.body.details).toEqual([
      { field: 'sort', message: expect.stringMatching(/^sort\[0\]\.field: must be one of/) },
    ]);
    // An empty sort is the default order, newest first.
    const empty = await call('GET', `${base()}/compute-functions?search=list-&sort=%5B%5D`, { token });
    expect(empty.body.functions.map((f: { name: string }) => f.name)).toEqual([
      'list-gamma',
      'list-beta',
      'list-alpha',
    ]);
  });

  it('keeps workspaces apart and enforces permissions', async () => {
    const mine = await create('private-fn');
    const id = mine.body.id as string;
    for (const [method, path, body] of [
      ['GET', `compute-functions/${id}`, undefined],
      ['PUT', `compute-functions/${id}`, { name: 'stolen' }],
      ['DELETE', `compute-functions/${id}`, undefined],
      ['GET', `compute-functions/${id}/versions`, undefined],
      ['GET', `compute-functions/${id}/versions/1`, undefined],
    ] as const) {
      const res = await call(method, `${base(otherWs)}/${path}`, { token: otherToken, ...(body ? { body } : {}) });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
    }
    expect((await call('GET', `${base(otherWs)}/compute-functions`, { token: otherToken })).body.total).toBe(0);
    // The other workspace's token on this workspace's URL.
    expect((await call('GET', `${base()}/compute-functions/${id}`, { token: otherToken })).status).toBe(403);
    expect((await call('GET', `${base()}/compute-functions/${id}`, { token })).body.name).toBe('private-fn');

    const reader = await serviceAccountToken(stack, ws, token, {
      name: `fn-reader-${suffix}`,
      resource: 'compute-functions',
      actions: ['retrieve', 'list'],
    });
    expect((await call('GET', `${base()}/compute-functions/${id}`, { token: reader })).status).toBe(200);
    expect((await create('by-reader', {}, reader)).status).toBe(403);
    expect((await call('DELETE', `${base()}/compute-functions/${id}`, { token: reader })).status).toBe(403);
    expect(
      (await call('POST', `${base()}/compute-functions/test`, { token: reader, body: { code: CODE, params: {} } }))
        .status,
    ).toBe(403);
  });
});

describe('drafts', () => {
  it('saves a draft, replaces it, and publishes it into a function (201), deleting the draft', async () => {
    const draft = await call('POST', `${base()}/drafts`, {
      token,
      body: { resourceType: 'compute-functions', data: { name: 'from-draft' } },
    });
    expect(draft.status).toBe(201);
    expect(draft.body).toMatchObject({
      id: expect.any(String),
      resourceType: 'compute-functions',
      data: { name: 'from-draft' },
    });
    // An incomplete draft does not publish: the body is checked as the create endpoint checks it.
    const incomplete = await call('POST', `${base()}/compute-functions/${draft.body.id}/publish`, { token });
    expect(incomplete).toMatchObject({ status: 400, body: { error: 'Function code is required.' } });
    const replaced = await call('PUT', `${base()}/drafts/${draft.body.id}`, {
      token,
      body: { data: { name: 'from-draft', code: CODE, description: 'drafted' } },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.data).toEqual({ name: 'from-draft', code: CODE, description: 'drafted' });
    const published = await call('POST', `${base()}/compute-functions/${draft.body.id}/publish`, { token });
    expect(published.status).toBe(201);
    expect(published.body).toMatchObject({ name: 'from-draft', description: 'drafted', code: CODE, version: 1 });
    expect((await call('GET', `${base()}/drafts/${draft.body.id}`, { token })).status).toBe(404);
    expect((await call('POST', `${base()}/compute-functions/${draft.body.id}/publish`, { token })).status).toBe(404);
  });

  it('answers 409 when the drafted name is taken, and keeps the draft', async () => {
    expect((await create('taken-by-fn')).status).toBe(201);
    const draft = await call('POST', `${base()}/drafts`, {
      token,
      body: { resourceType: 'compute-functions', data: { name: 'taken-by-fn', code: CODE } },
    });
    const published = await call('POST', `${base()}/compute-functions/${draft.body.id}/publish`, { token });
    expect(published).toMatchObject({ status: 409, body: { error: 'Function with that name already exists.' } });
    expect((await call('GET', `${base()}/drafts/${draft.body.id}`, { token })).status).toBe(200);
  });

  it('validates drafts and keeps them in their workspace', async () => {
    const bad = await call('POST', `${base()}/drafts`, { token, body: { resourceType: 'records', data: [] } });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['data', 'resourceType']);
    const draft = await call('POST', `${base()}/drafts`, {
      token,
      body: { resourceType: 'compute-functions', data: { name: 'mine', code: CODE } },
    });
    expect((await call('GET', `${base(otherWs)}/drafts/${draft.body.id}`, { token: otherToken })).status).toBe(404);
    expect(
      (await call('POST', `${base(otherWs)}/compute-functions/${draft.body.id}/publish`, { token: otherToken })).status,
    ).toBe(404);
    expect(
      (await call('PUT', `${base(otherWs)}/drafts/${draft.body.id}`, { token: otherToken, body: { data: {} } })).status,
    ).toBe(404);
  });
});
