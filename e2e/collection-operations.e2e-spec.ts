import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { adminWorkspaceToken, call, serviceAccountToken, startStack, type Stack } from '@strata/testkit';

// The collection operations the spec names without shapes (docs/data.md): bulk create, bulk
// delete, property removal, and validate of a definition or of a proposed one against the records.

let stack: Stack;
const suffix = Date.now().toString(36);
const ws = `colops-${suffix}`;
const otherWs = `colops-other-${suffix}`;
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
const api = (method: string, path: string, body?: unknown, bearer = token) =>
  call(method, `${base()}${path}`, { token: bearer, ...(body !== undefined ? { body } : {}) });
const fields = (details: { field: string }[]) => details.map((d) => d.field).sort();
const reference = (name: string, target: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: 'reference',
  target,
  relationship: 'many-to-one',
  onDelete: 'restrict',
  ...extra,
});

async function createRecords(structureId: string, data: Record<string, unknown>[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < data.length; i += 1000) {
    const res = await api('POST', '/records/bulk', {
      structureId,
      records: data.slice(i, i + 1000).map((d) => ({ data: d })),
    });
    expect(res.status).toBe(200);
    expect(res.body.failed).toBe(0);
    ids.push(...res.body.records.map((r: { id: string }) => r.id));
  }
  return ids;
}

describe('bulk create of collections', () => {
  it('creates collections that reference each other in any order, answering in the request order', async () => {
    const res = await api('POST', '/collections/bulk', {
      collections: [
        { name: 'Fwd Comments', properties: [reference('post', 'fwd-posts'), reference('author', 'fwd-authors')] },
        { name: 'Fwd Posts', properties: [{ name: 'title', type: 'string' }, reference('author', 'fwd-authors')] },
        { name: 'Fwd Authors', properties: [{ name: 'name', type: 'string' }, reference('mentor', 'fwd-authors')] },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((c: { recordSlug: string }) => c.recordSlug)).toEqual([
      'fwd-comments',
      'fwd-posts',
      'fwd-authors',
    ]);
    for (const slug of ['fwd-comments', 'fwd-posts', 'fwd-authors']) {
      expect((await api('GET', `/structures/slug/${slug}`)).status).toBe(200);
    }
  });

  it('refuses a cycle among the collections of the call, and names every problem by index, creating none', async () => {
    const res = await api('POST', '/collections/bulk', {
      collections: [
        { name: 'Cyc A', properties: [reference('b', 'cyc-b')] },
        { name: 'Cyc B', properties: [reference('a', 'cyc-a')] },
        { name: 'Cyc C', properties: [{ name: 'n', type: 'nope' }] },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.message).toBe('No collection was created');
    expect(fields(res.body.error.details)).toEqual([
      'collections[0].properties[0].target',
      'collections[1].properties[0].target',
      'collections[2].properties[0].type',
    ]);
    const cycle = res.body.error.details.find(
      (d: { field: string }) => d.field === 'collections[0].properties[0].target',
    );
    expect(cycle.message).toBe('would form a circular reference: cyc-a → cyc-b → cyc-a');
    for (const slug of ['cyc-a', 'cyc-b', 'cyc-c']) {
      expect((await api('GET', `/structures/slug/${slug}`)).status).toBe(404);
    }
  });

  it('takes the definitions under one key only', async () => {
    const both = await api('POST', '/structures/bulk', {
      structures: [{ name: 'One', properties: [] }],
      collections: [{ name: 'Two', properties: [] }],
    });
    expect(both.status).toBe(400);
    expect(fields(both.body.error.details)).toEqual(['collections']);
    expect((await api('POST', '/structures/bulk', {})).status).toBe(400);
    expect((await api('POST', '/collections/bulk', { collections: [] })).status).toBe(400);
  });
});

describe('bulk delete of collections', () => {
  it('deletes by id and by slug, answering per item: unknown ones 404, referenced ones 409', async () => {
    const made = await api('POST', '/structures/bulk', {
      structures: [
        { name: 'Bd Users', properties: [{ name: 'name', type: 'string' }] },
        { name: 'Bd Orders', properties: [reference('user', 'bd-users', { displayField: 'name' })] },
        { name: 'Bd Tags', properties: [] },
        { name: 'Bd Notes', properties: [reference('order', 'bd-orders')] },
      ],
    });
    expect(made.status).toBe(200);
    const [users, orders, tags, notes] = made.body.results as { id: string; recordSlug: string }[];
    const unknown = randomUUID();

    // bd-orders is referenced by bd-notes, which stays: it stays, and so does bd-users, which it references.
    const res = await api('DELETE', '/collections/bulk', {
      ids: [users!.id, unknown, tags!.id],
      slugs: ['bd-orders', 'bd-nowhere'],
    });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(false);
    expect(res.body.deleted).toEqual([{ id: tags!.id, recordSlug: 'bd-tags', deletedAt: expect.any(String) }]);
    expect(res.body.failed).toBe(4);
    expect(res.body.errors).toEqual([
      {
        field: 'ids[0]',
        error: { code: 'CONFLICT', message: "Collection 'bd-users' is referenced by bd-orders.user" },
      },
      { field: 'ids[1]', error: { code: 'STRUCTURE_NOT_FOUND', message: `Collection ${unknown} not found` } },
      {
        field: 'slugs[0]',
        error: { code: 'CONFLICT', message: "Collection 'bd-orders' is referenced by bd-notes.order" },
      },
      { field: 'slugs[1]', error: { code: 'STRUCTURE_NOT_FOUND', message: "Collection 'bd-nowhere' not found" } },
    ]);
    expect((await api('GET', `/structures/${tags!.id}`)).status).toBe(404);
    expect((await api('GET', `/structures/${users!.id}`)).status).toBe(200);

    // With the referencing collections in the same call, they all go.
    const all = await api('DELETE', '/structures/bulk', { slugs: ['bd-notes', 'bd-users'], ids: [orders!.id] });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ success: true, failed: 0, errors: [] });
    expect(all.body.deleted.map((d: { id: string }) => d.id).sort()).toEqual([notes!.id, users!.id, orders!.id].sort());
    // Soft-deleted: restorable, as a single delete leaves them.
    expect((await api('POST', `/structures/${notes!.id}/restore`)).status).toBe(409); // bd-orders is gone
  });

  it('validates the body', async () => {
    const empty = await api('DELETE', '/structures/bulk', {});
    expect(empty.status).toBe(400);
    const bad = await api('DELETE', '/structures/bulk', { ids: ['nope'], slugs: ['Not A Slug'] });
    expect(bad.status).toBe(400);
    expect(fields(bad.body.error.details)).toEqual(['ids', 'slugs']);
    const tooMany = await api('DELETE', '/structures/bulk', {
      ids: Array.from({ length: 60 }, () => randomUUID()),
      slugs: Array.from({ length: 60 }, (_, i) => `s-${i}`),
    });
    expect(tooMany.status).toBe(400);
  });
});

describe('property removal', () => {
  it('refuses names that are unknown (400), named elsewhere or immutable (409), each by index', async () => {
    const made = await api('POST', '/structures/bulk', {
      structures: [
        {
          name: 'Pr People',
          defaultSearchField: 'bio',
          properties: [
            { name: 'name', type: 'string' },
            { name: 'bio', type: 'string' },
            { name: 'code', type: 'string', immutable: true },
            { name: 'nick', type: 'string' },
            { name: 'spare', type: 'string' },
          ],
        },
        {
          name: 'Pr Posts',
          properties: [reference('author', 'pr-people', { targetField: 'name', displayField: 'nick' })],
        },
      ],
    });
    const people = made.body.results[0] as { id: string };
    const remove = (body: unknown) => api('DELETE', `/structures/${people.id}/properties`, body);

    const unknown = await remove({ names: ['spare', 'ghost'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details).toEqual([
      { field: 'names[1]', message: "the collection has no property 'ghost'" },
    ]);
    const named = await remove({ names: ['name', 'bio', 'code', 'nick', 'spare'], force: true });
    expect(named.status).toBe(409);
    expect(named.body.error.code).toBe('CONFLICT');
    expect(fields(named.body.error.details)).toEqual(['names[0]', 'names[1]', 'names[2]', 'names[3]']);
    expect(named.body.error.details[0].message).toContain('pr-posts.author');
    // Nothing changed.
    const after = await api('GET', `/structures/${people.id}`);
    expect(after.body.properties).toHaveLength(5);
    expect((await remove({ names: [] })).status).toBe(400);
    expect((await remove({ names: ['spare'], force: 'yes' })).status).toBe(400);
  });

  it('refuses while records hold values, and with force removes them in batches while writes go on', async () => {
    const made = await api('POST', '/structures', {
      name: 'Pr Items',
      properties: [
        { name: 'title', type: 'string', required: true },
        { name: 'legacy', type: 'string', required: true, isUnique: true },
        { name: 'old', type: 'number' },
      ],
    });
    expect(made.status).toBe(200);
    const id = made.body.id as string;
    // More records than one batch (1000), some soft-deleted.
    const ids = await createRecords(
      id,
      Array.from({ length: 2100 }, (_, i) => ({ title: `t${i}`, legacy: `l${i}`, ...(i % 2 ? { old: i } : {}) })),
    );
    for (const recordId of ids.slice(0, 3)) expect((await api('DELETE', `/records/${recordId}`)).status).toBe(200);

    const refused = await api('DELETE', `/collections/${id}/properties`, { names: ['legacy', 'old'] });
    expect(refused.status).toBe(409);
    expect(refused.body.error.details).toEqual([
      {
        field: 'names[0]',
        message: "2100 records hold values for 'legacy': send force: true to remove the values with the property",
      },
      {
        field: 'names[1]',
        message: "1050 records hold values for 'old': send force: true to remove the values with the property",
      },
    ]);
    expect((await api('GET', `/structures/${id}`)).body.properties).toHaveLength(3);

    // Writes to the records go on during the removal, and none is refused.
    let removing = true;
    const writes: number[] = [];
    const writer = (async () => {
      for (let n = 0; removing || n < 5; n++) {
        const target = ids[3 + (n % 50)]!;
        writes.push((await api('PATCH', `/records/${target}`, { data: { title: `w${n}` } })).status);
      }
    })();
    const forced = await api('DELETE', `/collections/${id}/properties`, { names: ['legacy', 'old'], force: true });
    removing = false;
    await writer;
    expect(forced.status).toBe(200);
    expect(forced.body.success).toBe(true);
    expect(forced.body.valuesRemoved).toBeGreaterThanOrEqual(2100);
    expect(forced.body.collection.properties.map((p: { name: string }) => p.name)).toEqual(['title']);
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.filter((s) => s !== 200)).toEqual([]);

    // No record holds the values any more, soft-deleted ones included.
    const listed = await api('GET', `/records?structureId=${id}&limit=100`);
    for (const r of listed.body.results as { data: Record<string, unknown> }[]) {
      expect(Object.keys(r.data)).toEqual(['title']);
    }
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM data.records WHERE collection_id = $1 AND jsonb_exists_any(data, $2)`,
        [id, ['legacy', 'old']],
      );
      expect(rows[0]!.n).toBe(0); // soft-deleted records included
    } finally {
      await db.end();
    }
    // The unique values went with them: the property can come back, unique, and take an old value.
    const back = await api('PUT', `/structures/${id}`, {
      properties: [
        { name: 'title', type: 'string', required: true },
        { name: 'legacy', type: 'string', isUnique: true },
      ],
    });
    expect(back.status).toBe(200);
    const reused = await api('PATCH', `/records/${ids[10]}`, { data: { legacy: 'l5' } });
    expect(reused.status).toBe(200);
  });

  it('a PUT that drops a unique property frees its values for a property of that name added back', async () => {
    const made = await api('POST', '/structures', {
      name: 'Pr Codes',
      properties: [
        { name: 'code', type: 'string', isUnique: true },
        { name: 'n', type: 'number' },
      ],
    });
    const id = made.body.id as string;
    const [first] = await createRecords(id, [{ code: 'A', n: 1 }]);
    const without = await api('PUT', `/structures/${id}`, { properties: [{ name: 'n', type: 'number' }] });
    expect(without.status).toBe(200);
    // The record is written again without the value.
    expect((await api('PUT', `/records/${first}`, { data: { n: 2 } })).status).toBe(200);
    const back = await api('PUT', `/structures/${id}`, {
      properties: [
        { name: 'n', type: 'number' },
        { name: 'code', type: 'string', isUnique: true },
      ],
    });
    expect(back.status).toBe(200);
    const again = await api('POST', '/records', { structureId: id, data: { code: 'A', n: 3 } });
    expect(again.status).toBe(201);
    // And the property added back is unique again.
    const twice = await api('POST', '/records', { structureId: id, data: { code: 'A', n: 4 } });
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe('DUPLICATE_KEY');
  });

  it('removes properties no record holds without force', async () => {
    const made = await api('POST', '/structures', {
      name: 'Pr Empty',
      properties: [
        { name: 'a', type: 'string' },
        { name: 'b', type: 'string' },
      ],
    });
    await createRecords(made.body.id, [{ a: 'x' }]);
    const res = await api('DELETE', `/structures/${made.body.id}/properties`, { names: ['b'] });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, valuesRemoved: 0 });
    expect(res.body.collection.properties.map((p: { name: string }) => p.name)).toEqual(['a']);
  });
});

describe('validate', () => {
  it('answers for a definition what a create would, saving nothing', async () => {
    const body = {
      name: 'Val Broken',
      unknownField: 1,
      properties: [
        { name: 'a', type: 'string', minLength: 5, maxLength: 2 },
        { name: 'r', type: 'reference', target: 'nowhere', relationship: 'many-to-one', onDelete: 'set_null' },
      ],
      defaultSearchField: 'missing',
    };
    const checked = await api('POST', '/structures/validate', body);
    expect(checked.status).toBe(200);
    expect(checked.body.valid).toBe(false);
    const created = await api('POST', '/structures', body);
    expect(created.status).toBe(400);
    expect(checked.body.errors).toEqual(created.body.error.details);
    expect(fields(checked.body.errors)).toEqual(
      [
        'defaultSearchField',
        'properties[0].minLength',
        'properties[1].onDelete',
        'properties[1].target',
        'unknownField',
      ].sort(),
    );

    const fine = await api('POST', '/collections/validate', {
      name: 'Val Fine',
      properties: [{ name: 'title', type: 'string' }],
    });
    expect(fine.status).toBe(200);
    expect(fine.body).toEqual({ valid: true });
    expect((await api('GET', '/structures/slug/val-fine')).status).toBe(404);

    await api('POST', '/structures', { name: 'Val Taken', properties: [] });
    const taken = await api('POST', '/structures/validate', { name: 'X', recordSlug: 'val-taken', properties: [] });
    expect(taken.body).toEqual({
      valid: false,
      errors: [{ field: 'recordSlug', message: "is taken: a collection with recordSlug 'val-taken' exists" }],
    });
    expect((await api('POST', '/structures/validate', [1, 2])).status).toBe(400);
  });

  it('checks the existing records against a proposed definition, in pages, saving nothing', async () => {
    const targets = await api('POST', '/structures', {
      name: 'Val Owners',
      properties: [{ name: 'n', type: 'string' }],
    });
    const [owner] = await createRecords(targets.body.id, [{ n: 'o' }]);
    const made = await api('POST', '/structures', {
      name: 'Val People',
      properties: [
        { name: 'age', type: 'number' },
        { name: 'owner', type: 'string' },
        { name: 'note', type: 'string' },
      ],
    });
    const id = made.body.id as string;
    // 620 records (more than a page of 500): ages 0..619; every 100th names an owner that exists.
    const ids = await createRecords(
      id,
      Array.from({ length: 620 }, (_, i) => ({ age: i, owner: i % 100 === 0 ? owner : randomUUID(), note: 'n' })),
    );

    const proposal = {
      properties: [
        { name: 'age', type: 'number', maximum: 599 },
        reference('owner', 'val-owners'),
        { name: 'email', type: 'string', required: true, default: 'x@y.z' },
      ],
    };
    const res = await api('POST', `/structures/${id}/validate`, proposal);
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(false);
    expect(res.body.errors).toEqual([]);
    const { records } = res.body;
    expect(res.body.migration).toEqual({ required: true, properties: ['age', 'owner', 'email'] });
    expect(records.checked).toBe(620);
    expect(records.failed).toBe(620); // each lacks the required email and holds the dropped note
    expect(records.byField).toEqual({ 'data.age': 20, 'data.owner': 613, 'data.email': 620, 'data.note': 620 });
    expect(records.sample).toHaveLength(20);
    for (const failing of records.sample as { id: string; errors: { field: string }[] }[]) {
      const i = ids.indexOf(failing.id);
      expect(i).toBeGreaterThanOrEqual(0);
      const expected = [
        'data.email',
        'data.note',
        ...(i >= 600 ? ['data.age'] : []),
        ...(i % 100 ? ['data.owner'] : []),
      ];
      expect(fields(failing.errors)).toEqual(expected.sort());
    }

    // A proposal the records fit.
    const fits = await api('POST', `/collections/${id}/validate`, {
      properties: [
        { name: 'age', type: 'number', minimum: 0 },
        { name: 'owner', type: 'string' },
        { name: 'note', type: 'string', enum: ['n'] },
      ],
    });
    expect(fits.body).toEqual({
      valid: true,
      errors: [],
      records: { checked: 620, failed: 0, byField: {}, sample: [] },
      // The PUT would start a migration of the properties whose constraints change.
      migration: { required: true, properties: ['age', 'note'] },
    });

    // A definition the update would refuse: its problems, as the PUT lists them; records unchecked.
    const bad = { properties: [{ name: 'age', type: 'number', minimum: 5, maximum: 1 }], recordSlug: 'other' };
    const refused = await api('POST', `/structures/${id}/validate`, bad);
    const put = await api('PUT', `/structures/${id}`, bad);
    expect(put.status).toBe(400);
    expect(refused.body).toEqual({ valid: false, errors: put.body.error.details });

    // Nothing was saved.
    const after = await api('GET', `/structures/${id}`);
    expect(after.body.properties.map((p: { name: string; type: string }) => `${p.name}:${p.type}`)).toEqual([
      'age:number',
      'owner:string',
      'note:string',
    ]);
    // Record data still goes to the record check.
    expect((await api('POST', `/structures/${id}/validate`, { data: { age: 1 } })).body).toEqual({ valid: true });
  });

  it('says whether a proposed definition would start a migration', async () => {
    const change = { properties: [{ name: 'size', type: 'number' }] };
    const empty = await api('POST', '/structures', {
      name: 'Val Empty',
      properties: [{ name: 'size', type: 'string' }],
    });
    // Without records, no job starts (the properties it would check are named all the same).
    const none = await api('POST', `/structures/${empty.body.id}/validate`, change);
    expect(none.body).toMatchObject({ valid: true, migration: { required: false, properties: ['size'] } });
    await createRecords(empty.body.id, [{ size: '3' }]);
    const some = await api('POST', `/structures/${empty.body.id}/validate`, change);
    expect(some.body).toMatchObject({ valid: false, migration: { required: true, properties: ['size'] } });
    const other = await api('POST', `/structures/${empty.body.id}/validate`, { description: 'sizes' });
    expect(other.body).toMatchObject({ valid: true, migration: { required: false, properties: [] } });
  });

  it('stays within the workspace and the permissions', async () => {
    const made = await api('POST', '/structures', { name: 'Val Mine', properties: [] });
    const foreign = await call('POST', `${base(otherWs)}/structures/${made.body.id}/validate`, {
      token: otherToken,
      body: { properties: [] },
    });
    expect(foreign.status).toBe(404);
    const crossed = await call('POST', `${base()}/structures/${made.body.id}/validate`, {
      token: otherToken,
      body: { properties: [] },
    });
    expect(crossed.status).toBe(403);

    const reader = await serviceAccountToken(stack, ws, token, {
      name: `reader-${suffix}`,
      resource: 'structures',
      actions: ['retrieve', 'list'],
    });
    const denied = await Promise.all([
      api('POST', '/structures/validate', { name: 'x', properties: [] }, reader),
      api('POST', `/structures/${made.body.id}/validate`, { properties: [] }, reader),
      api('POST', '/structures/bulk', { structures: [{ name: 'x', properties: [] }] }, reader),
      api('DELETE', '/structures/bulk', { ids: [made.body.id] }, reader),
      api('DELETE', `/structures/${made.body.id}/properties`, { names: ['x'] }, reader),
    ]);
    expect(denied.map((r) => r.status)).toEqual([403, 403, 403, 403, 403]);

    const checker = await serviceAccountToken(stack, ws, token, {
      name: `checker-${suffix}`,
      resource: 'structures',
      actions: ['validate'],
    });
    const allowed = await api('POST', '/collections/validate', { name: 'x', properties: [] }, checker);
    expect(allowed.status).toBe(200);
  });

  it('describes the operations in the OpenAPI document behind the gateway', async () => {
    const doc = await call('GET', `${stack.baseUrl}/docs/data.json`);
    expect(doc.status).toBe(200);
    const paths = doc.body.paths as Record<string, Record<string, unknown>>;
    for (const name of ['structures', 'collections']) {
      const at = `/data/workspace/{workspace}/api/v1/${name}`;
      expect(Object.keys(paths[`${at}/validate`] ?? {})).toContain('post');
      expect(Object.keys(paths[`${at}/{id}/validate`] ?? {})).toContain('post');
      expect(Object.keys(paths[`${at}/bulk`] ?? {}).sort()).toEqual(['delete', 'post']);
      expect(Object.keys(paths[`${at}/{id}/properties`] ?? {})).toContain('delete');
    }
  });
});
