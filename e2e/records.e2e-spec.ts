import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import {
  adminWorkspaceToken,
  call,
  EventCollector,
  serviceAccountToken,
  startStack,
  type Stack,
} from '@strata/testkit';

let stack: Stack;
let events: EventCollector;
const ws = `rec-${Date.now().toString(36)}`;
let token: string;

beforeAll(async () => {
  stack = await startStack();
  token = await adminWorkspaceToken(stack, ws);
  events = await EventCollector.start(stack.natsPrefix);
});

afterAll(async () => {
  await events?.stop();
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

describe('records', () => {
  let customers: { id: string; recordSlug: string };

  beforeAll(async () => {
    customers = await collection({
      name: 'Customers',
      enableVersioning: true,
      properties: [
        { name: 'email', type: 'string', required: true, isUnique: true, pattern: '^[^@]+@[^@]+$' },
        { name: 'name', type: 'string', required: true, maxLength: 50 },
        { name: 'tier', type: 'string', enum: ['free', 'pro'], default: 'free' },
        { name: 'seq', type: 'number', autoIncrement: { startAt: 100, incrementBy: 5 } },
        { name: 'spend', type: 'number', minimum: 0 },
        { name: 'spendWithTax', type: 'number', expression: 'spend * 1.25' },
        { name: 'label', type: 'string', nullable: true },
        { name: 'apiKey', type: 'string', isSecret: true },
      ],
    });
  });

  it('creates, reads, patches, replaces, versions, restores and deletes a record, with its events', async () => {
    const created = await api('POST', '/records', {
      structureId: customers.id,
      data: { email: 'ada@example.com', name: 'Ada', spend: 8, label: 'vip', apiKey: 'k-123' },
      metadata: { source: 'import' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      structureId: customers.id,
      recordSlug: 'customers',
      workspaceSlug: ws,
      status: 'active',
      version: 1,
      metadata: { source: 'import' },
      data: {
        email: 'ada@example.com',
        name: 'Ada',
        tier: 'free',
        seq: 100,
        spend: 8,
        spendWithTax: 10,
        apiKey: 'k-123',
      },
    });
    const id: string = created.body.id;

    const got = await api('GET', `/records/${id}`);
    expect(got.body).toEqual(created.body);

    const patched = await api('PATCH', `/records/${id}`, { data: { tier: 'pro', label: null, spend: 16 } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ version: 2, previousVersion: 1, data: { tier: 'pro', spendWithTax: 20 } });
    expect(patched.body.data).not.toHaveProperty('label');

    const replaced = await api('PUT', `/records/${id}`, { data: { email: 'ada@example.com', name: 'Ada L.' } });
    expect(replaced.status).toBe(200);
    // PUT removes what it does not send; defaults come back; the auto-assigned number stays.
    expect(replaced.body.data).toEqual({ email: 'ada@example.com', name: 'Ada L.', tier: 'free', seq: 100 });

    const history = await api('GET', `/records/${id}/history`);
    expect(history.body.versions.map((v: { version: number }) => v.version)).toEqual([1, 2, 3]);
    expect(history.body.versions[0].createdAt).toBeDefined();
    expect(history.body.versions[1].changes).toEqual({
      tier: { old: 'free', new: 'pro' },
      label: { old: 'vip', new: null },
      spend: { old: 8, new: 16 },
      spendWithTax: { old: 10, new: 20 },
    });

    const restored = await api('POST', `/records/${id}/restore`, { version: 1, reason: 'undo' });
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ id, version: 4, restoredFrom: 1, data: { name: 'Ada', label: 'vip' } });
    expect((await api('GET', `/records/${id}?version=2`)).body).toMatchObject({ version: 2, data: { tier: 'pro' } });

    const changelog = await api('GET', `/records/${id}/changelog?limit=10`);
    expect(changelog.body.entries.map((e: { action: string }) => e.action)).toEqual([
      'revert',
      'update',
      'update',
      'create',
    ]);
    expect(changelog.body.entries[2].changes.tier).toEqual({ field: 'tier', oldValue: 'free', newValue: 'pro' });

    const deleted = await api('DELETE', `/records/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ success: true, id });
    const gone = await api('GET', `/records/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('RECORD_NOT_FOUND');
    // A soft-deleted record comes back through restore.
    const back = await api('POST', `/records/${id}/restore`, { version: 3 });
    expect(back.body).toMatchObject({ version: 5, restoredFrom: 3 });
    expect((await api('DELETE', `/records/${id}?permanent=true`)).status).toBe(200);
    expect((await api('POST', `/records/${id}/restore`, { version: 1 })).status).toBe(404);

    const seen = await events.waitFor((e) => 'recordId' in e.payload && e.payload.recordId === id, 7);
    expect(seen.map((e) => e.payload.event)).toEqual([
      'record_created',
      'record_updated',
      'record_updated',
      'record_reverted',
      'record_deleted',
      'record_restored',
      'record_deleted',
    ]);
    expect(new Set(seen.map((e) => e.msgId)).size).toBe(7);
    expect(seen[4]!.payload).toEqual({
      event: 'record_deleted',
      workspaceSlug: ws,
      recordSlug: 'customers',
      recordId: id,
      timestamp: expect.any(String),
      deletedBy: created.body.createdBy,
      data: expect.objectContaining({
        id,
        version: 4,
        data: expect.objectContaining({ name: 'Ada', apiKey: '********' }),
      }),
    });
    expect(seen[3]!.payload).toMatchObject({
      event: 'record_reverted',
      data: { before: { version: 3 }, after: { version: 4, data: { name: 'Ada' } } },
    });
    const [createdEvent, updatedEvent] = seen;
    expect(createdEvent!.subject).toBe(`${stack.natsPrefix}.records.${ws}.customers.record_created`);
    expect(createdEvent!.msgId).toMatch(/^[0-9a-f-]{36}$/);
    expect(createdEvent!.payload).toEqual({
      event: 'record_created',
      workspaceSlug: ws,
      recordSlug: 'customers',
      recordId: id,
      timestamp: expect.any(String),
      createdBy: expect.any(String),
      data: {
        id,
        workspaceSlug: ws,
        recordSlug: 'customers',
        status: 'active',
        version: 1,
        createdAt: created.body.createdAt,
        updatedAt: created.body.updatedAt,
        createdBy: created.body.createdBy,
        updatedBy: created.body.updatedBy,
        // Secrets are masked in every event.
        data: { ...created.body.data, apiKey: '********' },
      },
    });
    expect(updatedEvent!.payload).toMatchObject({
      event: 'record_updated',
      updatedBy: created.body.createdBy,
      data: { before: { version: 1, data: { tier: 'free' } }, after: { version: 2, data: { tier: 'pro' } } },
    });
  });

  it('lists every validation problem at once in the records error shape, writing nothing', async () => {
    const res = await api('POST', '/records', {
      structureId: customers.id,
      data: { email: 'not-an-email', name: 'x'.repeat(51), tier: 'gold', spend: -1, seq: 3, extra: true },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details).toEqual([
      { field: 'data.seq', message: 'is assigned automatically and cannot be set' },
      { field: 'data.email', message: 'must match the pattern ^[^@]+@[^@]+$' },
      { field: 'data.name', message: 'must be at most 50 characters long' },
      { field: 'data.tier', message: 'must be one of ["free","pro"]' },
      { field: 'data.spend', message: 'must be at least 0' },
      { field: 'data.extra', message: 'is not a property of this object' },
    ]);
    const body = await api('POST', '/records', { structureId: 'nope', data: 'x' });
    expect(body.status).toBe(400);
    expect(body.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['data', 'structureId']);
    // PostgreSQL cannot store NUL in jsonb: a 400 at the door, not a 500 at the INSERT.
    const nul = await api('POST', '/records', { structureId: customers.id, data: { email: 'a@b', name: 'x\u0000y' } });
    expect(nul.status).toBe(400);
    expect(nul.body.error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.stringContaining('NUL') });
    const unknownCollection = await api('POST', '/records', {
      structureId: '0b5f8a4e-1d7e-4a36-9a53-5f0d0f0c1a11',
      data: {},
    });
    expect(unknownCollection.status).toBe(404);
    expect(unknownCollection.body.error.code).toBe('STRUCTURE_NOT_FOUND');
  });

  it('never lets two concurrent writers of one unique value both win, nor repeats an auto-increment', async () => {
    const attempts = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        api('POST', '/records', { structureId: customers.id, data: { email: 'same@example.com', name: `n${i}` } }),
      ),
    );
    const statuses = attempts.map((a) => a.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    const conflict = attempts.find((a) => a.status === 409)!;
    expect(conflict.body.error).toMatchObject({ code: 'DUPLICATE_KEY', details: [{ field: 'data.email' }] });

    const many = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        api('POST', '/records', { structureId: customers.id, data: { email: `c${i}@example.com`, name: `c${i}` } }),
      ),
    );
    expect(many.every((r) => r.status === 201)).toBe(true);
    const seqs = many.map((r) => r.body.data.seq as number);
    expect(new Set(seqs).size).toBe(12);
    for (const s of seqs) expect((s - 100) % 5).toBe(0);
  });

  it('stores secrets encrypted and shows them only to callers holding secrets:reveal', async () => {
    const created = await api('POST', '/records', {
      structureId: customers.id,
      data: { email: 'sec@example.com', name: 'Sec', apiKey: 'plain-secret-value' },
    });
    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ data: { apiKey: string } }>('SELECT data FROM data.records WHERE id = $1', [
        created.body.id,
      ]);
      expect(rows[0]!.data.apiKey).toMatch(/^sv1\.1\./);
      expect(JSON.stringify(rows[0])).not.toContain('plain-secret-value');
    } finally {
      await client.end();
    }
    // A service account allowed to read records, but not to reveal secrets.
    const readerToken = await serviceAccountToken(stack, ws, token, {
      name: 'reader',
      resource: 'records',
      actions: ['retrieve', 'list'],
    });
    const asReader = await api('GET', `/records/${created.body.id}`, undefined, readerToken);
    expect(asReader.status).toBe(200);
    expect(asReader.body.data.apiKey).toBe('********');
    expect((await api('GET', `/records/${created.body.id}`)).body.data.apiKey).toBe('plain-secret-value');
    const cannotWrite = await api('PATCH', `/records/${created.body.id}`, { data: { name: 'x' } }, readerToken);
    expect(cannotWrite.status).toBe(403);
  });
});

describe('a collection that changes between writes', () => {
  // The data service keeps each collection it writes to and has every create confirm, in
  // its own statement, that the collection has not changed since: these writes come right
  // after a change the service did not see coming from the write path.
  it('validates each create against the definition current at the write, and 404s once it is deleted', async () => {
    const notes = await collection({ name: 'Notes', properties: [{ name: 'title', type: 'string', maxLength: 10 }] });
    const create = (title: string) => api('POST', '/records', { structureId: notes.id, data: { title } });
    const redefine = (maxLength: number) =>
      api('PUT', `/structures/${notes.id}`, { properties: [{ name: 'title', type: 'string', maxLength }] });
    expect((await create('seven ch')).status).toBe(201);

    expect((await redefine(3)).status).toBe(200);
    const tightened = await create('seven ch');
    expect(tightened.status).toBe(400);
    expect(tightened.body.error.details).toEqual([
      { field: 'data.title', message: 'must be at most 3 characters long' },
    ]);

    expect((await redefine(20)).status).toBe(200);
    const loosened = await create('fifteen chars..');
    expect(loosened.status).toBe(201);
    expect(loosened.body.data).toEqual({ title: 'fifteen chars..' });

    expect((await api('DELETE', `/structures/${notes.id}`)).status).toBe(200);
    const gone = await create('x');
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('STRUCTURE_NOT_FOUND');
    const list = await api('GET', `/records?structureId=${notes.id}&limit=10`);
    expect(list.status).toBe(404);
  });
});

describe('references', () => {
  it('checks targets exist and applies restrict, cascade and set_null on delete, in one transaction', async () => {
    const authors = await collection({ name: 'Writers', properties: [{ name: 'name', type: 'string' }] });
    const books = await collection({
      name: 'Novels',
      properties: [
        { name: 'title', type: 'string' },
        {
          name: 'author',
          type: 'reference',
          target: authors.recordSlug,
          relationship: 'many-to-one',
          onDelete: 'restrict',
        },
      ],
    });
    const notes = await collection({
      name: 'Notes',
      properties: [
        {
          name: 'about',
          type: 'reference',
          target: authors.recordSlug,
          relationship: 'many-to-one',
          onDelete: 'cascade',
        },
        {
          name: 'fans',
          type: 'reference',
          target: authors.recordSlug,
          relationship: 'many-to-many',
          onDelete: 'set_null',
          nullable: true,
        },
      ],
    });
    const add = async (structureId: string, data: unknown) => {
      const res = await api('POST', '/records', { structureId, data });
      return res;
    };
    const ursula = (await add(authors.id, { name: 'Ursula' })).body.id as string;
    const terry = (await add(authors.id, { name: 'Terry' })).body.id as string;

    const missing = await add(books.id, { title: 'X', author: '0b5f8a4e-1d7e-4a36-9a53-5f0d0f0c1a11' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details[0]).toMatchObject({
      field: 'data.author',
      message: expect.stringMatching(/names no record of writers/),
    });

    const book = (await add(books.id, { title: 'Earthsea', author: ursula })).body.id as string;
    const note = (await add(notes.id, { about: terry, fans: [ursula, terry] })).body.id as string;

    const restricted = await api('DELETE', `/records/${ursula}`);
    expect(restricted.status).toBe(409);
    expect(restricted.body.error.message).toMatch(/referenced by 1 record\(s\) of novels.author/);
    expect((await api('GET', `/records/${ursula}`)).status).toBe(200);
    // The restricted delete changed nothing, not even the set_null of another reference.
    expect((await api('GET', `/records/${note}`)).body.data.fans).toEqual([ursula, terry]);

    // Deleting Terry cascades to the note about him (whose fans list also named him).
    expect((await api('DELETE', `/records/${terry}`)).status).toBe(200);
    expect((await api('GET', `/records/${note}`)).status).toBe(404);

    // Once the book is gone, Ursula can go: set_null removes her from other notes' fans.
    const other = (await add(notes.id, { fans: [ursula] })).body.id as string;
    expect((await api('DELETE', `/records/${book}`)).status).toBe(200);
    expect((await api('DELETE', `/records/${ursula}`)).status).toBe(200);
    expect((await api('GET', `/records/${other}`)).body.data.fans).toEqual([]);
  });
});

describe('bulk, batch and optimistic concurrency', () => {
  let things: { id: string; recordSlug: string };

  beforeAll(async () => {
    things = await collection({
      name: 'Gadgets',
      schemaDiscoveryMode: 'auto-evolving',
      properties: [
        { name: 'sku', type: 'string', required: true, isUnique: true },
        { name: 'qty', type: 'number', minimum: 0, default: 0 },
      ],
    });
  });

  it('bulk-creates valid items, reports invalid ones by index, and emits one aggregate event', async () => {
    const res = await api('POST', '/records/bulk', {
      structureId: things.id,
      records: [
        { data: { sku: 'a' } },
        { data: { sku: 'b', qty: -1 } },
        { data: { sku: 'c', colour: 'red' } },
        { data: { sku: 'a' } },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: false, created: 2, failed: 2 });
    expect(res.body.records.map((r: { data: { sku: string } }) => r.data.sku)).toEqual(['a', 'c']);
    expect(res.body.errors).toEqual([
      {
        index: 1,
        error: {
          code: 'VALIDATION_ERROR',
          message: expect.any(String),
          details: [{ field: 'data.qty', message: 'must be at least 0' }],
        },
      },
      {
        index: 3,
        error: {
          code: 'DUPLICATE_KEY',
          message: 'A record with this sku already exists',
          details: [{ field: 'data.sku', message: 'must be unique in the collection' }],
        },
      },
    ]);
    const ids = res.body.records.map((r: { id: string }) => r.id);
    const [aggregate] = await events.waitFor(
      (e) => e.payload.event === 'records_bulk_created' && e.payload.recordSlug === 'gadgets',
    );
    expect(aggregate!.payload).toEqual({
      event: 'records_bulk_created',
      workspaceSlug: ws,
      recordSlug: 'gadgets',
      structureId: things.id,
      recordIds: ids,
      count: 2,
      timestamp: expect.any(String),
      createdBy: expect.any(String),
      schemaDiscoveryMode: 'auto-evolving',
    });
    // Bulk emits no per-record events.
    expect(
      events.seen.filter(
        (e) => e.payload.event === 'record_created' && ids.includes((e.payload as { recordId: string }).recordId),
      ),
    ).toEqual([]);
  });

  it('batch-creates with one record_created event per record', async () => {
    const res = await api('POST', '/records/batch', {
      structureId: things.id,
      records: [{ data: { sku: 'batch-1' } }, { data: { sku: 'batch-2' } }],
      options: { returnRecords: false },
    });
    expect(res.body).toMatchObject({ success: true, created: 2, failed: 0, records: [], errors: [] });
    const seen = await events.waitFor(
      (e) =>
        e.payload.event === 'record_created' &&
        e.payload.recordSlug === 'gadgets' &&
        /batch-/.test(JSON.stringify(e.payload)),
      2,
    );
    expect(seen).toHaveLength(2);
  });

  it('bulk-updates and bulk-deletes, naming missing records', async () => {
    const created = await api('POST', '/records/bulk', {
      structureId: things.id,
      records: [{ data: { sku: 'u1' } }, { data: { sku: 'u2' } }],
    });
    const [a, b] = created.body.records.map((r: { id: string }) => r.id);
    const ghost = '0b5f8a4e-1d7e-4a36-9a53-5f0d0f0c1a11';
    const updated = await api('PATCH', '/records/bulk', {
      updates: [
        { id: a, data: { qty: 5 } },
        { id: ghost, data: {} },
      ],
    });
    expect(updated.body).toMatchObject({
      success: false,
      updated: 1,
      failed: 1,
      errors: [{ index: 1, id: ghost, error: { code: 'RECORD_NOT_FOUND' } }],
    });
    expect(updated.body.results[0]).toMatchObject({ id: a, version: 2, data: { qty: 5 } });
    const deleted = await api('DELETE', '/records/bulk', { ids: [a, b], permanent: true });
    expect(deleted.body).toEqual({ success: true, deleted: 2, failed: 0, errors: [] });
    const [aggregate] = await events.waitFor((e) => e.payload.event === 'records_bulk_deleted');
    expect(aggregate!.payload).toMatchObject({ recordIds: [a, b], count: 2, deletedBy: expect.any(String) });
    const tooMany = await api('DELETE', '/records/bulk', { ids: [] });
    expect(tooMany.status).toBe(400);
  });

  it('refuses a write made against a version that moved on (If-Match)', async () => {
    const created = await api('POST', '/records', { structureId: things.id, data: { sku: 'occ' } });
    const id = created.body.id;
    const first = await call('PATCH', `${base()}/records/${id}`, {
      token,
      body: { data: { qty: 1 } },
      headers: { 'if-match': '"1"' },
    });
    expect(first.status).toBe(200);
    const stale = await call('PATCH', `${base()}/records/${id}`, {
      token,
      body: { data: { qty: 2 } },
      headers: { 'if-match': '1' },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'VERSION_CONFLICT' });
    const bad = await call('DELETE', `${base()}/records/${id}`, { token, headers: { 'if-match': 'yesterday' } });
    expect(bad.status).toBe(400);
    expect((await call('DELETE', `${base()}/records/${id}`, { token, headers: { 'if-match': '2' } })).status).toBe(200);
  });
});

describe('upsert', () => {
  let people: { id: string; recordSlug: string };

  beforeAll(async () => {
    people = await collection({
      name: 'People',
      properties: [
        { name: 'code', type: 'string', nullable: true },
        { name: 'num', type: 'number' },
        { name: 'name', type: 'string' },
      ],
    });
  });

  const upsert = (body: unknown, headers: Record<string, string> = {}) =>
    call('POST', `${base()}/records/slug/${people.recordSlug}/upsert`, { token, body, headers });

  it('creates with the match merged in, then updates keeping the business key', async () => {
    const created = await upsert({ match: { code: 'p-1' }, data: { name: 'Ann', code: 'ignored' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      operation: 'created',
      data: { id: expect.any(String), data: { code: 'p-1', name: 'Ann' }, version: 1, createdAt: expect.any(String) },
    });
    const updated = await upsert({ match: { code: 'p-1' }, data: { name: 'Anne', code: 'changed?' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({
      operation: 'updated',
      data: {
        id: created.body.data.id,
        data: { code: 'p-1', name: 'Anne' },
        version: 2,
        updatedAt: expect.any(String),
      },
    });
  });

  it('compares type-strictly and matches null only where the field holds null', async () => {
    const number = await upsert({ match: { num: 42 }, data: { name: 'number' } });
    const text = await upsert({ match: { code: '42' }, data: { name: 'text' } });
    expect([number.status, text.status]).toEqual([201, 201]);
    const nulled = await upsert({ match: { code: null }, data: { name: 'null code' } });
    expect(nulled.status).toBe(201);
    expect(nulled.body.data.data.code).toBeNull();
    // The record created with num 42 has no code at all: a null match does not find it.
    const again = await upsert({ match: { code: null }, data: { name: 'null code 2' } });
    expect(again.body).toMatchObject({ operation: 'updated', data: { id: nulled.body.data.id } });
  });

  it('serialises concurrent upserts of one key: one create, the rest updates', async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => upsert({ match: { code: 'race' }, data: { name: `r${i}` } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
    expect(Math.max(...results.map((r) => r.body.data.version as number))).toBe(6);
  });

  it('replays the first response for a repeated Idempotency-Key and refuses a key reused for another request', async () => {
    const first = await upsert({ match: { code: 'idem' }, data: { name: 'once' } }, { 'idempotency-key': 'k-1' });
    const repeat = await upsert({ match: { code: 'idem' }, data: { name: 'once' } }, { 'idempotency-key': 'k-1' });
    expect(first.status).toBe(201);
    expect(repeat.status).toBe(201);
    expect(repeat.body).toEqual(first.body);
    const record = await api('GET', `/records/${first.body.data.id}`);
    expect(record.body.version).toBe(1);
    const reused = await upsert({ match: { code: 'idem' }, data: { name: 'twice' } }, { 'idempotency-key': 'k-1' });
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('UNPROCESSABLE');
  });

  it('validates match and answers 404 for an unknown collection', async () => {
    const bad = await upsert({ match: { unknown: 1, name: { x: 1 } }, data: {} });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'match.name',
      'match.unknown',
    ]);
    expect((await upsert({ match: {}, data: {} })).status).toBe(400);
    const missing = await call('POST', `${base()}/records/slug/nope/upsert`, {
      token,
      body: { match: { a: 1 }, data: {} },
    });
    expect(missing.status).toBe(404);
  });
});

describe('expand', () => {
  it('puts referenced records under data._expanded, following dotted paths and many-to-many lists', async () => {
    const companies = await collection({ name: 'Companies', properties: [{ name: 'name', type: 'string' }] });
    const staff = await collection({
      name: 'Staff',
      properties: [
        { name: 'name', type: 'string' },
        {
          name: 'company',
          type: 'reference',
          target: companies.recordSlug,
          relationship: 'many-to-one',
          onDelete: 'cascade',
        },
      ],
    });
    const projects = await collection({
      name: 'Projects',
      properties: [
        {
          name: 'lead',
          type: 'reference',
          target: staff.recordSlug,
          relationship: 'many-to-one',
          onDelete: 'restrict',
        },
        {
          name: 'members',
          type: 'reference',
          target: staff.recordSlug,
          relationship: 'many-to-many',
          onDelete: 'set_null',
          nullable: true,
        },
      ],
    });
    const acme = (await api('POST', '/records', { structureId: companies.id, data: { name: 'Acme' } })).body.id;
    const bob = (await api('POST', '/records', { structureId: staff.id, data: { name: 'Bob', company: acme } })).body
      .id;
    const eve = (await api('POST', '/records', { structureId: staff.id, data: { name: 'Eve' } })).body.id;
    const project = (
      await api('POST', '/records', { structureId: projects.id, data: { lead: bob, members: [bob, eve] } })
    ).body.id;

    const got = await api('GET', `/records/${project}?expand=lead,lead.company,members`);
    expect(got.status).toBe(200);
    expect(got.body.data._expanded).toEqual({
      lead: {
        id: bob,
        data: { name: 'Bob', company: acme, _expanded: { company: { id: acme, data: { name: 'Acme' } } } },
      },
      members: [
        { id: bob, data: expect.objectContaining({ name: 'Bob' }) },
        { id: eve, data: { name: 'Eve' } },
      ],
    });
    const listed = await api('GET', `/records/slug/${projects.recordSlug}?expand=lead`);
    expect(listed.body.results[0].data._expanded.lead.id).toBe(bob);
    const notReference = await api('GET', `/records/${project}?expand=name`);
    expect(notReference.status).toBe(400);
    expect(notReference.body.error.details[0]).toEqual({
      field: 'expand',
      message: '"name" is not a reference field of projects',
    });
  });
});

describe('failure events', () => {
  it('emits *_failed events for refused writes to a known collection', async () => {
    const c = await collection({ name: 'Strict Things', properties: [{ name: 'n', type: 'number', required: true }] });
    const refused = await api('POST', '/records', { structureId: c.id, data: { n: 'x' } });
    expect(refused.status).toBe(400);
    const [created] = await events.waitFor(
      (e) => e.payload.event === 'record_created_failed' && e.payload.recordSlug === c.recordSlug,
    );
    expect(created!.subject).toBe(`${stack.natsPrefix}.records.${ws}.${c.recordSlug}.record_created_failed`);
    expect(created!.payload).toEqual({
      event: 'record_created_failed',
      workspaceSlug: ws,
      recordSlug: c.recordSlug,
      error: { code: 'VALIDATION_ERROR', message: 'The record does not match its collection' },
      timestamp: expect.any(String),
      createdBy: expect.any(String),
    });

    const record = (await api('POST', '/records', { structureId: c.id, data: { n: 1 } })).body.id;
    const stale = await call('PATCH', `${base()}/records/${record}`, {
      token,
      body: { data: { n: 2 } },
      headers: { 'if-match': '9' },
    });
    expect(stale.status).toBe(409);
    const [updated] = await events.waitFor(
      (e) => e.payload.event === 'record_updated_failed' && 'recordId' in e.payload && e.payload.recordId === record,
    );
    expect(updated!.payload).toMatchObject({ error: { code: 'VERSION_CONFLICT' }, updatedBy: expect.any(String) });

    const bulk = await api('POST', '/records/bulk', {
      structureId: c.id,
      records: [{ data: {} }, { data: { n: 'no' } }],
    });
    expect(bulk.body).toMatchObject({ created: 0, failed: 2 });
    const [aggregate] = await events.waitFor(
      (e) => e.payload.event === 'records_bulk_created_failed' && e.payload.recordSlug === c.recordSlug,
    );
    const ghostUpdate = await api('PATCH', '/records/bulk', { updates: [{ id: record, data: { n: 'bad' } }] });
    expect(ghostUpdate.body).toMatchObject({ updated: 0, failed: 1 });
    const [bulkUpdate] = await events.waitFor(
      (e) => e.payload.event === 'records_bulk_updated_failed' && e.payload.recordSlug === c.recordSlug,
    );
    expect(bulkUpdate!.payload).toMatchObject({ error: { code: 'VALIDATION_ERROR' }, updatedBy: expect.any(String) });
    expect(aggregate!.payload).toMatchObject({
      error: { code: 'VALIDATION_ERROR', message: expect.stringMatching(/^All 2 items were refused/) },
    });
  });
});

describe('isolation and permissions', () => {
  it('refuses a second record pointing at the same target of a one-to-one reference', async () => {
    const users = await collection({ name: 'Accounts', properties: [{ name: 'login', type: 'string' }] });
    const profiles = await collection({
      name: 'Profiles',
      properties: [
        {
          name: 'account',
          type: 'reference',
          target: users.recordSlug,
          relationship: 'one-to-one',
          onDelete: 'cascade',
        },
      ],
    });
    const account = (await api('POST', '/records', { structureId: users.id, data: { login: 'ada' } })).body.id;
    expect((await api('POST', '/records', { structureId: profiles.id, data: { account } })).status).toBe(201);
    const second = await api('POST', '/records', { structureId: profiles.id, data: { account } });
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({ code: 'DUPLICATE_KEY', details: [{ field: 'data.account' }] });
  });

  it('stores fields named like inherited members (toString, valueOf, constructor) on every write path', async () => {
    const c = await collection({
      name: 'Inherited Names',
      enableVersioning: true,
      properties: [
        { name: 'toString', type: 'string', default: 'fallback' },
        { name: 'valueOf', type: 'number', isUnique: true },
        { name: 'constructor', type: 'string', immutable: true },
        { name: 'hasOwnProperty', type: 'boolean' },
      ],
    });
    const created = await api('POST', '/records', {
      structureId: c.id,
      data: { toString: 'mine', valueOf: 1, constructor: 'k', hasOwnProperty: true },
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({ toString: 'mine', valueOf: 1, constructor: 'k', hasOwnProperty: true });
    const defaulted = await api('POST', '/records', { structureId: c.id, data: { valueOf: 2 } });
    expect(defaulted.body.data).toEqual({ toString: 'fallback', valueOf: 2 });
    const duplicate = await api('POST', '/records', { structureId: c.id, data: { valueOf: 1 } });
    expect(duplicate.status).toBe(409);
    const immutable = await api('PATCH', `/records/${created.body.id}`, { data: { constructor: 'other' } });
    expect(immutable.status).toBe(400);
    expect(immutable.body.error.details).toEqual([expect.objectContaining({ field: 'data.constructor' })]);
    const patched = await api('PATCH', `/records/${created.body.id}`, { data: { toString: 'changed', valueOf: 3 } });
    expect(patched.body.data).toEqual({ toString: 'changed', valueOf: 3, constructor: 'k', hasOwnProperty: true });
    const history = await api('GET', `/records/${created.body.id}/history`);
    expect(history.body.versions.at(-1).changes).toEqual({
      toString: { old: 'mine', new: 'changed' },
      valueOf: { old: 1, new: 3 },
    });
    const bulk = await api('POST', '/records/bulk', {
      structureId: c.id,
      records: [{ data: { toString: 'bulk', valueOf: 4 } }],
    });
    expect(bulk.body.records[0].data).toEqual({ toString: 'bulk', valueOf: 4 });
    const upserted = await api('POST', `/records/slug/${c.recordSlug}/upsert`, {
      match: { valueOf: 4 },
      data: { hasOwnProperty: false },
    });
    expect(upserted.body.data.data).toEqual({ toString: 'bulk', valueOf: 4, hasOwnProperty: false });
  });

  it('never shows a record to another workspace, and upsert needs both create and update', async () => {
    const c = await collection({ name: 'Private Notes', properties: [{ name: 'text', type: 'string' }] });
    const note = (await api('POST', '/records', { structureId: c.id, data: { text: 'mine' } })).body.id;
    const otherWs = `${ws}-other`;
    const otherToken = await adminWorkspaceToken(stack, otherWs);
    const other = (path: string) =>
      call('GET', `${stack.baseUrl}/data/workspace/${otherWs}/api/v1${path}`, { token: otherToken });
    expect((await api('GET', `/records/${note}`, undefined, otherToken)).status).toBe(403);
    expect((await other(`/records/${note}`)).status).toBe(404);
    expect((await other(`/records?structureId=${c.id}`)).status).toBe(404);
    expect((await other(`/records/slug/${c.recordSlug}`)).status).toBe(404);

    // A service account that may create records but not update them cannot upsert.
    const creator = await serviceAccountToken(stack, ws, token, {
      name: 'creator',
      resource: 'records',
      actions: ['create'],
    });
    expect((await api('POST', '/records', { structureId: c.id, data: { text: 'ok' } }, creator)).status).toBe(201);
    const upsert = await api(
      'POST',
      `/records/slug/${c.recordSlug}/upsert`,
      { match: { text: 'ok' }, data: {} },
      creator,
    );
    expect(upsert.status).toBe(403);
    expect(upsert.body.error).toMatchObject({
      code: 'PERMISSION_DENIED',
      message: 'Missing permission: records:update',
    });
  });
});
