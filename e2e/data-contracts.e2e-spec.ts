import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { adminWorkspaceToken, call, serviceAccountToken, startStack, type Stack } from '@strata/testkit';

/**
 * Contract points of the data service (issue 36): the changelog's userName, the legacy list
 * form's deprecation, saved queries' deprecated forms, a record read at a version, inactive
 * collections, the string language's FROM-first order, and byte-exact Idempotency-Key replays.
 */
let stack: Stack;
const ws = `dc-${Date.now().toString(36)}`;
let token: string;

beforeAll(async () => {
  stack = await startStack();
  token = await adminWorkspaceToken(stack, ws);
});

afterAll(async () => {
  await stack?.stop();
});

const base = () => `${stack.baseUrl}/data/workspace/${ws}/api/v1`;
const api = (method: string, path: string, body?: unknown, bearer = token) =>
  call(method, `${base()}${path}`, { token: bearer, ...(body !== undefined ? { body } : {}) });

async function collection(body: Record<string, unknown>): Promise<{ id: string; recordSlug: string }> {
  const res = await api('POST', '/structures', body);
  expect(res.status).toBe(200);
  return res.body;
}

/** A raw answer: status, the body's exact text, and headers. */
async function raw(method: string, url: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

describe('the changelog', () => {
  it("names who changed a record: a user's name, a service account's name", async () => {
    const notes = await collection({ name: 'Notes', properties: [{ name: 'text', type: 'string' }] });
    const bot = await serviceAccountToken(stack, ws, token, {
      name: 'importer-bot',
      resource: 'records',
      actions: ['create', 'retrieve', 'update'],
    });
    const created = await api('POST', '/records', { structureId: notes.id, data: { text: 'a' } });
    expect(created.status).toBe(201);
    const patched = await api('PATCH', `/records/${created.body.id}`, { data: { text: 'b' } }, bot);
    expect(patched.status).toBe(200);

    const log = await api('GET', `/records/${created.body.id}/changelog`);
    expect(log.status).toBe(200);
    const byAction = Object.fromEntries(
      log.body.entries.map((e: { action: string; userId: string; userName: string }) => [e.action, e]),
    );
    // The administrator's display name, not its user id; the account's name, not its client id.
    expect(byAction.create).toMatchObject({ userId: created.body.createdBy, userName: 'Administrator' });
    expect(byAction.update).toMatchObject({ userId: patched.body.updatedBy, userName: 'importer-bot' });
    expect(byAction.update.userId).toMatch(/^ci_/);
  });
});

describe('a record read at a version', () => {
  it("answers that version's timestamps and actor, not the current record's", async () => {
    const docs = await collection({
      name: 'Docs',
      enableVersioning: true,
      properties: [{ name: 'title', type: 'string' }],
    });
    const editor = await serviceAccountToken(stack, ws, token, {
      name: 'editor-bot',
      resource: 'records',
      actions: ['create', 'retrieve', 'update'],
    });
    const created = await api('POST', '/records', { structureId: docs.id, data: { title: 'v1' } });
    const id = created.body.id;
    const updated = await api('PATCH', `/records/${id}`, { data: { title: 'v2' } }, editor);
    expect(updated.status).toBe(200);
    expect(updated.body.updatedBy).not.toBe(created.body.createdBy);
    expect(updated.body.updatedAt).not.toBe(created.body.updatedAt);

    const first = await api('GET', `/records/${id}?version=1`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      version: 1,
      data: { title: 'v1' },
      createdAt: created.body.createdAt,
      createdBy: created.body.createdBy,
      updatedAt: created.body.updatedAt,
      updatedBy: created.body.createdBy,
    });
    const second = await api('GET', `/records/${id}?version=2`);
    expect(second.body).toMatchObject({
      version: 2,
      updatedAt: updated.body.updatedAt,
      updatedBy: updated.body.updatedBy,
    });
  });
});

describe('an inactive collection', () => {
  it('refuses every record write with 409 in the records shape, and keeps serving reads', async () => {
    const parked = await collection({
      name: 'Parked',
      enableVersioning: true,
      properties: [{ name: 'sku', type: 'string' }],
    });
    const kept = await api('POST', '/records', { structureId: parked.id, data: { sku: 'a' } });
    await api('PATCH', `/records/${kept.body.id}`, { data: { sku: 'b' } });
    const gone = await api('POST', '/records', { structureId: parked.id, data: { sku: 'gone' } });
    await api('DELETE', `/records/${gone.body.id}`);
    const off = await api('PUT', `/structures/${parked.id}`, { status: 'inactive' });
    expect(off.status).toBe(200);
    expect(off.body.status).toBe('inactive');

    const id = kept.body.id;
    const writes: [string, string, unknown][] = [
      ['POST', '/records', { structureId: parked.id, data: { sku: 'c' } }],
      ['PATCH', `/records/${id}`, { data: { sku: 'c' } }],
      ['PUT', `/records/${id}`, { data: { sku: 'c' } }],
      ['POST', `/records/slug/${parked.recordSlug}/upsert`, { match: { sku: 'b' }, data: { sku: 'b' } }],
      ['POST', '/records/bulk', { structureId: parked.id, records: [{ data: { sku: 'd' } }] }],
      ['POST', '/records/batch', { structureId: parked.id, records: [{ data: { sku: 'd' } }] }],
      ['PATCH', '/records/bulk', { updates: [{ id, data: { sku: 'e' } }] }],
      ['DELETE', '/records/bulk', { ids: [id], permanent: false }],
      ['DELETE', `/records/${id}`, undefined],
      ['POST', `/records/${id}/restore`, { version: 1 }],
      ['POST', `/records/${gone.body.id}/restore`, { version: 1 }],
    ];
    for (const [method, path, body] of writes) {
      const res = await api(method, path, body);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 409 });
      expect(res.body).toEqual({
        error: {
          code: 'CONFLICT',
          message: expect.stringMatching(/Collection 'parked' is inactive: its records can be read but not written/),
          details: { structureId: parked.id, recordSlug: 'parked', status: 'inactive' },
        },
      });
    }

    // Nothing was written, and reads work.
    const read = await api('GET', `/records/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ version: 2, data: { sku: 'b' } });
    const list = await api('GET', `/records/slug/${parked.recordSlug}`);
    expect(list.status).toBe(200);
    expect(list.body.results).toHaveLength(1);
    expect((await api('POST', '/records/query', { resource: parked.recordSlug })).status).toBe(200);

    // Active again, writable again.
    expect((await api('PUT', `/structures/${parked.id}`, { status: 'active' })).status).toBe(200);
    expect((await api('PATCH', `/records/${id}`, { data: { sku: 'f' } })).status).toBe(200);
  });
});

describe('the string language', () => {
  it("accepts the spec's FROM-first order besides SQL's", async () => {
    const orders = await collection({
      name: 'Orders',
      properties: [
        { name: 'status', type: 'string' },
        { name: 'total', type: 'number' },
      ],
    });
    for (const [status, total] of [
      ['open', 5],
      ['open', 7],
      ['paid', 9],
    ] as const) {
      await api('POST', '/records', { structureId: orders.id, data: { status, total } });
    }
    const fromFirst = await api('POST', '/query', {
      query: 'FROM orders GROUP BY data.status SELECT data.status, COUNT(*) ORDER BY data.status',
    });
    expect(fromFirst.status).toBe(200);
    const sql = await api('POST', '/query', {
      query: 'SELECT data.status, COUNT(*) FROM orders GROUP BY data.status ORDER BY data.status',
    });
    expect(fromFirst.body).toEqual(sql.body);
    expect(fromFirst.body.data.map((row: Record<string, unknown>) => row['count'])).toEqual([2, 1]);
    const spec = await api('POST', '/query', { query: 'FROM orders GROUP BY data.status SELECT COUNT(*)' });
    expect(spec.status).toBe(200);

    const records = await api('POST', '/query', {
      query: "FROM orders WHERE data.status = 'open' ORDER BY data.total DESC LIMIT 1",
    });
    expect(records.status).toBe(200);
    expect(records.body.data.map((r: { data: { total: number } }) => r.data.total)).toEqual([7]);
  });
});

describe('deprecated forms', () => {
  const sunset = 'Thu, 29 Oct 2026 23:59:59 GMT';

  it('answers the legacy list form on both list paths with its headers, after its sunset too', async () => {
    const items = await collection({ name: 'Items', properties: [{ name: 'n', type: 'number' }] });
    await api('POST', '/records', { structureId: items.id, data: { n: 1 } });
    await api('POST', '/records', { structureId: items.id, data: { n: 2 } });
    for (const path of [`/records?structureId=${items.id}&data.n[gt]=1`, `/records/slug/items?data.n[gt]=1`]) {
      const res = await api('GET', path);
      expect(res.status).toBe(200);
      expect(res.headers.get('deprecation')).toBe('true');
      expect(res.headers.get('sunset')).toBe('Thu, 10 Sep 2026 23:59:59 GMT');
      expect(res.headers.get('link')).toBe('</docs/data.json#filter>; rel="successor-version"');
      expect(res.body.results.map((r: { data: { n: number } }) => r.data.n)).toEqual([2]);
    }
  });

  it('marks {{var}} placeholders and a promoted legacy join at every execution', async () => {
    const makers = await collection({ name: 'Makers', properties: [{ name: 'country', type: 'string' }] });
    const tools = await collection({
      name: 'Tools',
      properties: [
        { name: 'name', type: 'string' },
        { name: 'price', type: 'number' },
        { name: 'makerId', type: 'string' },
      ],
    });
    const maker = await api('POST', '/records', { structureId: makers.id, data: { country: 'NO' } });
    await api('POST', '/records', { structureId: tools.id, data: { name: 'saw', price: 5, makerId: maker.body.id } });

    const legacyVars = await api('POST', '/saved-queries', {
      name: 'cheap',
      query: { resource: 'tools', where: { 'data.price': { lte: '{{max}}' } } },
      variables: { max: { type: 'number' } },
    });
    expect(legacyVars.status).toBe(201);
    const legacyJoin = await api('POST', '/saved-queries', {
      name: 'with maker',
      query: { resource: 'tools', join: { foreignSlug: 'makers', localField: 'makerId', foreignField: 'id' } },
    });
    expect(legacyJoin.status).toBe(201);
    expect(legacyJoin.headers.get('sunset')).toBe(sunset);
    const current = await api('POST', '/saved-queries', {
      name: 'current',
      query: { resource: 'tools', where: { 'data.price': { lte: '${max}' } } },
      variables: { max: { type: 'number' } },
    });

    const forms = (id: string) => [
      `/saved-queries/${id}/execute`,
      `/saved-queries/tools/${id}/execute`,
      `/saved-queries/slug/tools/execute/${id}`,
    ];
    for (const path of forms(legacyVars.body.id)) {
      const res = await api('POST', path, { variables: { max: 10 } });
      expect(res.status).toBe(200);
      expect(res.headers.get('deprecation')).toBe('true');
      expect(res.headers.get('sunset')).toBe(sunset);
      expect(res.headers.get('link')).toContain('</docs/data.json#saved-query-variables>; rel="successor-version"');
    }
    for (const path of forms(legacyJoin.body.id)) {
      const res = await api('POST', path, {});
      expect(res.status).toBe(200);
      expect(res.headers.get('deprecation')).toBe('true');
      expect(res.headers.get('sunset')).toBe(sunset);
      expect(res.headers.get('link')).toContain('</docs/data.json#joins>; rel="successor-version"');
    }
    const now = await api('POST', `/saved-queries/${current.body.id}/execute`, { variables: { max: 10 } });
    expect(now.status).toBe(200);
    expect(now.headers.get('deprecation')).toBeNull();

    // A definition tested without saving, and a canonical query, say the same.
    const tested = await api('POST', '/saved-queries/tools/test', {
      query: { where: { 'data.price': { lte: '{{max}}' } } },
      variables: { max: { type: 'number' } },
      values: { max: 10 },
    });
    expect(tested.status).toBe(200);
    expect(tested.headers.get('sunset')).toBe(sunset);
    expect(tested.headers.get('link')).toContain('#saved-query-variables');
    const canonical = await api('POST', '/records/query', {
      resource: 'tools',
      join: { foreignSlug: 'makers', localField: 'makerId', foreignField: 'id' },
    });
    expect(canonical.status).toBe(200);
    expect(canonical.headers.get('sunset')).toBe(sunset);
    expect(canonical.headers.get('link')).toBe('</docs/data.json#joins>; rel="successor-version"');
  });
});

describe('Idempotency-Key replays', () => {
  it('repeat an upsert answer byte for byte: status, body text and content type', async () => {
    await collection({
      name: 'Accounts',
      properties: [
        { name: 'email', type: 'string' },
        // Declared, and sent, in an order jsonb would not keep (it sorts keys by length).
        { name: 'zzzzzzzzzz', type: 'string' },
        { name: 'b', type: 'number' },
        { name: 'nested', type: 'object', properties: [] },
        // Answered in plaintext to a caller holding secrets:reveal, and kept masked: with a key, both answers mask it.
        { name: 'token', type: 'string', isSecret: true },
      ],
    });
    const url = `${base()}/records/slug/accounts/upsert`;
    const body = {
      match: { email: 'a@example.test' },
      data: { zzzzzzzzzz: 'long key first', b: 1.5, nested: { yy: 1, x: [1, { b: 2, a: 1 }] }, token: 's3cret' },
    };
    const headers = { 'idempotency-key': `upsert-${ws}` };
    const first = await raw('POST', url, body, headers);
    expect(first.status).toBe(201);
    const replay = await raw('POST', url, body, headers);
    expect(replay.status).toBe(first.status);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(replay.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(JSON.parse(first.text).data.data.token).toBe('********');

    // An update answered with a key replays as it was too, after the record moved on.
    const updateKey = { 'idempotency-key': `upsert-update-${ws}` };
    const updated = await raw('POST', url, { ...body, data: { ...body.data, b: 2 } }, updateKey);
    expect(updated.status).toBe(200);
    await raw('POST', url, { ...body, data: { ...body.data, b: 3 } }, {});
    const again = await raw('POST', url, { ...body, data: { ...body.data, b: 2 } }, updateKey);
    expect(again.status).toBe(200);
    expect(again.text).toBe(updated.text);
  });

  it('repeat a webhook subscription create byte for byte', async () => {
    const url = `${base()}/webhook-subscriptions`;
    const body = {
      name: 'replayed',
      url: 'https://hooks.example.test/strata',
      events: ['record_created', 'record_updated'],
    };
    const headers = { 'idempotency-key': `subscription-${ws}` };
    const first = await raw('POST', url, body, headers);
    expect(first.status).toBe(201);
    const replay = await raw('POST', url, body, headers);
    expect(replay.status).toBe(201);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('content-type')).toBe(first.headers.get('content-type'));
  });
});
