import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { eventually } from '@strata/testing';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

let stack: Stack;
const suffix = Date.now().toString(36);
const ws = `data-${suffix}`;
const otherWs = `data-other-${suffix}`;
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
const post = (path: string, body: unknown, bearer = token) => call('POST', `${base()}${path}`, { token: bearer, body });

describe('collections', () => {
  it('creates a collection with every property type, generating ids, the slug and the defaults', async () => {
    const created = await post('/structures', {
      name: 'Blog Posts',
      description: 'articles',
      enableVersioning: true,
      defaultSearchField: 'title',
      tags: ['content'],
      properties: [
        { name: 'title', type: 'string', required: true, maxLength: 200 },
        { name: 'views', type: 'number', minimum: 0, default: 0 },
        { name: 'published', type: 'boolean', default: false },
        { name: 'publishedAt', type: 'datetime', nullable: true },
        { name: 'tags', type: 'array', items: { type: 'string' }, uniqueItems: true },
        { name: 'seo', type: 'object', properties: [{ name: 'slug', type: 'string' }] },
        {
          name: 'parent',
          type: 'reference',
          target: 'blog-posts',
          relationship: 'many-to-one',
          onDelete: 'set_null',
          nullable: true,
        },
      ],
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      workspaceSlug: ws,
      recordSlug: 'blog-posts',
      name: 'Blog Posts',
      status: 'active',
      schemaDiscoveryMode: 'strict',
      schemaDiscoveryConfig: { batchSize: 10, maxKeysPerRecord: 100, maxNestingDepth: 3, maxStringLengthSampled: 1000 },
      enableVersioning: true,
      defaultSearchField: 'title',
      tags: ['content'],
      metadata: { recordWritesLocked: false, structureWritesLocked: false, migrationInProgress: false },
      isDeleted: false,
    });
    expect(created.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.body.properties).toHaveLength(7);
    for (const p of created.body.properties) expect(p.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.body.properties[0]).toMatchObject({
      required: true,
      nullable: false,
      isUnique: false,
      immutable: false,
    });

    const { id } = created.body;
    for (const path of [`/structures/${id}`, `/collections/${id}`, '/structures/slug/blog-posts']) {
      const got = await call('GET', `${base()}${path}`, { token });
      expect(got.status).toBe(200);
      expect(got.body).toEqual(created.body);
    }
    const listed = await call('GET', `${base()}/collections?search=blog`, { token });
    expect(listed.status).toBe(200);
    expect(listed.body.pagination).toEqual({ limit: 20, offset: 0, total: 1, hasMore: false });
    expect(listed.body.results[0].id).toBe(id);
  });

  it('refuses bad definitions with one detail per offending field, in the records error shape', async () => {
    const res = await post('/structures', {
      name: 'Broken',
      properties: [
        { name: 'a', type: 'string', minLength: 5, maxLength: 2 },
        { name: 'b', type: 'string', pattern: '([' },
        { name: 'c', type: 'array', items: { type: 'array' } },
        { name: 'a', type: 'number', default: 'x' },
        { name: 'r', type: 'reference', target: 'nowhere', relationship: 'many-to-one', onDelete: 'set_null' },
      ],
      defaultSearchField: 'missing',
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(typeof res.body.error.message).toBe('string');
    const fields = (res.body.error.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual(
      [
        'defaultSearchField',
        'properties[0].minLength',
        'properties[1].pattern',
        'properties[2].items.type',
        'properties[3].default',
        'properties[3].name',
        'properties[4].onDelete',
        'properties[4].target',
      ].sort(),
    );
    // Nothing was written.
    const listed = await call('GET', `${base()}/structures?search=broken`, { token });
    expect(listed.body.pagination.total).toBe(0);
  });

  it('validates the body itself: unknown fields, wrong types, bad slugs', async () => {
    const res = await post('/structures', {
      name: '',
      recordSlug: 'Not A Slug',
      colour: 'red',
      enableVersioning: 'yes',
    });
    expect(res.status).toBe(400);
    const fields = (res.body.error.details as { field: string }[]).map((d) => d.field).sort();
    expect(fields).toEqual(['colour', 'enableVersioning', 'name', 'recordSlug']);
    const notJson = await call('POST', `${base()}/structures`, {
      token,
      body: '{"name": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe('VALIDATION_ERROR');
    // A nested object given as an array (ValidateNested alone took it, stored as {"0": …}).
    for (const retentionPolicy of [[{ maxVersions: 2 }], []]) {
      const nested = await post('/structures', {
        name: 'Arrays',
        properties: [],
        retentionPolicy,
        schemaDiscoveryConfig: [],
      });
      expect(nested.status).toBe(400);
      const byField = (a: { field: string }, b: { field: string }) => a.field.localeCompare(b.field);
      expect([...nested.body.error.details].sort(byField)).toEqual([
        { field: 'retentionPolicy', message: 'retentionPolicy must be an object' },
        { field: 'schemaDiscoveryConfig', message: 'schemaDiscoveryConfig must be an object' },
      ]);
    }
  });

  it('keeps slugs unique per workspace: generated ones get a suffix, a taken explicit one is a 409', async () => {
    const first = await post('/structures', { name: 'Orders', properties: [] });
    const second = await post('/structures', { name: 'Orders', properties: [] });
    expect([first.body.recordSlug, second.body.recordSlug]).toEqual(['orders', 'orders-2']);
    const taken = await post('/structures', { name: 'Other', recordSlug: 'orders', properties: [] });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({
      code: 'CONFLICT',
      message: "A collection with recordSlug 'orders' already exists",
    });
    // Another workspace has its own slugs.
    const elsewhere = await post('/structures', { name: 'Orders', properties: [] }, otherToken).catch(() => undefined);
    expect(elsewhere?.status).toBe(403);
    const own = await call('POST', `${base(otherWs)}/structures`, {
      token: otherToken,
      body: { name: 'Orders', properties: [] },
    });
    expect(own.body.recordSlug).toBe('orders');
  });

  it('maps the older isStrict flag and refuses a contradiction', async () => {
    const loose = await post('/structures', { name: 'Loose', isStrict: false, properties: [] });
    expect(loose.body.schemaDiscoveryMode).toBe('auto-evolving');
    const strict = await post('/structures', { name: 'Tight', isStrict: true, properties: [] });
    expect(strict.body.schemaDiscoveryMode).toBe('strict');
    const both = await post('/structures', {
      name: 'Both',
      isStrict: true,
      schemaDiscoveryMode: 'schemaless',
      properties: [],
    });
    expect(both.status).toBe(400);
    expect(both.body.error.details[0].field).toBe('isStrict');
  });

  it('checks references across collections: fields exist, no cycles, referenced collections cannot be deleted', async () => {
    const authors = await post('/structures', {
      name: 'Authors',
      properties: [{ name: 'email', type: 'string', isUnique: true }],
    });
    const books = await post('/structures', {
      name: 'Books',
      properties: [
        {
          name: 'author',
          type: 'reference',
          target: 'authors',
          targetField: 'email',
          displayField: 'email',
          relationship: 'many-to-one',
          onDelete: 'restrict',
        },
      ],
    });
    expect(books.status).toBe(200);
    const badField = await post('/structures', {
      name: 'Reviews',
      properties: [
        {
          name: 'book',
          type: 'reference',
          target: 'books',
          displayField: 'isbn',
          relationship: 'many-to-one',
          onDelete: 'cascade',
        },
      ],
    });
    expect(badField.status).toBe(400);
    expect(badField.body.error.details).toEqual([
      { field: 'properties[0].displayField', message: 'names no property of books: "isbn"' },
    ]);
    // authors → books → authors would be a cycle.
    const cycle = await call('PUT', `${base()}/structures/${authors.body.id}`, {
      token,
      body: {
        properties: [
          { name: 'email', type: 'string', isUnique: true },
          { name: 'favourite', type: 'reference', target: 'books', relationship: 'many-to-one', onDelete: 'restrict' },
        ],
      },
    });
    expect(cycle.status).toBe(400);
    expect(cycle.body.error.details[0]).toEqual({
      field: 'properties[1].target',
      message: 'would form a circular reference: authors → books → authors',
    });
    // Removing a field another collection's reference uses is refused.
    const dropEmail = await call('PUT', `${base()}/structures/${authors.body.id}`, { token, body: { properties: [] } });
    expect(dropEmail.status).toBe(400);
    expect(dropEmail.body.error.details[0].message).toMatch(/used by the reference books.author/);
    const refused = await call('DELETE', `${base()}/structures/${authors.body.id}`, { token });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toBe("Collection 'authors' is referenced by books.author");
  });

  it('updates fields, keeps immutable properties and the slug fixed, and soft-deletes', async () => {
    const created = await post('/structures', {
      name: 'Invoices',
      properties: [
        { name: 'number', type: 'string', immutable: true },
        { name: 'amount', type: 'number' },
      ],
    });
    const url = `${base()}/structures/${created.body.id}`;
    const [numberProp, amountProp] = created.body.properties;
    const updated = await call('PUT', url, {
      token,
      body: { name: 'Invoices 2026', status: 'inactive', properties: [numberProp, { ...amountProp, minimum: 0 }] },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: 'Invoices 2026', status: 'inactive', recordSlug: 'invoices' });
    expect(updated.body.properties[1]).toMatchObject({ id: amountProp.id, minimum: 0 });

    const changeImmutable = await call('PUT', url, {
      token,
      body: { properties: [{ ...numberProp, maxLength: 10 }, amountProp], recordSlug: 'bills' },
    });
    expect(changeImmutable.status).toBe(400);
    expect(changeImmutable.body.error.details).toEqual([
      { field: 'recordSlug', message: "is fixed at creation and cannot be changed (it is 'invoices')" },
      { field: 'properties[0]', message: '"number" is immutable and cannot be changed' },
    ]);

    const deleted = await call('DELETE', url, { token });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ success: true, id: created.body.id });
    const gone = await call('GET', url, { token });
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('STRUCTURE_NOT_FOUND');
    // The slug is free again.
    expect((await post('/structures', { name: 'Invoices', properties: [] })).body.recordSlug).toBe('invoices');
  });

  it('restores a deleted collection with its records, unless its slug or its references are gone', async () => {
    const notes = await post('/structures', { name: 'Notes', properties: [{ name: 'text', type: 'string' }] });
    const note = await post('/records', { structureId: notes.body.id, data: { text: 'keep me' } });
    expect(note.status).toBe(201);
    const url = `${base()}/structures/${notes.body.id}`;
    expect((await call('POST', `${url}/restore`, { token })).status).toBe(409); // not deleted
    expect((await call('DELETE', url, { token })).status).toBe(200);
    expect((await call('GET', `${base()}/records/${note.body.id}`, { token })).status).toBe(404);

    // Listed only when asked, as deleted.
    const listed = async (query: string) =>
      (await call('GET', `${base()}/structures?search=notes${query}`, { token })).body.results.map(
        (c: { id: string; isDeleted: boolean }) => [c.id, c.isDeleted],
      );
    expect(await listed('')).toEqual([]);
    expect(await listed('&includeDeleted=true')).toEqual([[notes.body.id, true]]);
    const badFlag = await call('GET', `${base()}/structures?includeDeleted=yes`, { token });
    expect(badFlag.status).toBe(400);
    expect(badFlag.body.error.details).toEqual([
      { field: 'includeDeleted', message: 'includeDeleted must be true or false' },
    ]);

    // Another workspace cannot restore it, even by id.
    expect(
      (await call('POST', `${base(otherWs)}/structures/${notes.body.id}/restore`, { token: otherToken })).status,
    ).toBe(404);

    const restored = await call('POST', `${url}/restore`, { token });
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ id: notes.body.id, recordSlug: 'notes', isDeleted: false });
    expect((await call('GET', `${base()}/records/${note.body.id}`, { token })).body).toMatchObject({
      data: { text: 'keep me' },
    });
    expect((await post('/records', { structureId: notes.body.id, data: { text: 'again' } })).status).toBe(201);

    // Its slug taken meanwhile: 409, and it stays deleted.
    expect((await call('DELETE', url, { token })).status).toBe(200);
    const taker = await post('/structures', { name: 'Notes', properties: [] });
    expect(taker.body.recordSlug).toBe('notes');
    const taken = await call('POST', `${url}/restore`, { token });
    expect(taken.status).toBe(409);
    expect(taken.body.error.message).toContain(`collection ${taker.body.id} has taken its recordSlug 'notes'`);
    expect((await call('GET', url, { token })).status).toBe(404);

    // A reference to a collection deleted since: 409 naming it.
    const shelves = await post('/structures', { name: 'Shelves', properties: [] });
    const books = await post('/structures', {
      name: 'Shelved Books',
      properties: [
        { name: 'shelf', type: 'reference', target: 'shelves', relationship: 'many-to-one', onDelete: 'restrict' },
      ],
    });
    expect(books.body).toMatchObject({ recordSlug: 'shelved-books' });
    expect((await call('DELETE', `${base()}/structures/${books.body.id}`, { token })).status).toBe(200);
    expect((await call('DELETE', `${base()}/structures/${shelves.body.id}`, { token })).status).toBe(200);
    const orphan = await call('POST', `${base()}/structures/${books.body.id}/restore`, { token });
    expect(orphan.status).toBe(409);
    expect(orphan.body.error.message).toMatch(/cannot be restored: properties\[0\].*shelves/);
    expect((await call('POST', `${base()}/structures/${shelves.body.id}/restore`, { token })).status).toBe(200);
    expect((await call('POST', `${base()}/structures/${books.body.id}/restore`, { token })).status).toBe(200);
  });

  it('validates record data against a collection without writing it', async () => {
    const people = await post('/structures', {
      name: 'People',
      properties: [
        { name: 'name', type: 'string', required: true, maxLength: 5 },
        { name: 'age', type: 'number', minimum: 0 },
      ],
    });
    const url = `${base()}/structures/${people.body.id}/validate`;
    const ok = await call('POST', url, { token, body: { data: { name: 'Ann', age: 3 } } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ valid: true });
    const bad = await call('POST', `${base()}/collections/${people.body.id}/validate`, {
      token,
      body: { data: { name: 'Annabel', age: -1, extra: true } },
    });
    expect(bad.status).toBe(200);
    expect(bad.body.valid).toBe(false);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'data.age',
      'data.extra',
      'data.name',
    ]);
    // Nothing was written.
    const listed = await call('GET', `${base()}/records?structureId=${people.body.id}&includeCount=true`, { token });
    expect(listed.body.pagination.total).toBe(0);
    // A body that is not a check request is still a 400; an unknown collection a 404.
    expect((await call('POST', url, { token, body: { data: 'Ann' } })).status).toBe(400);
    const unknown = await call('POST', `${base()}/structures/${randomUUID()}/validate`, { token, body: { data: {} } });
    expect(unknown.status).toBe(404);
  });

  it('creates collections in bulk, in order and all or none, with every problem named by index', async () => {
    const created = await post('/structures/bulk', {
      structures: [
        { name: 'Bulk Authors', properties: [{ name: 'name', type: 'string' }] },
        {
          name: 'Bulk Posts',
          properties: [
            {
              name: 'author',
              type: 'reference',
              target: 'bulk-authors',
              relationship: 'many-to-one',
              onDelete: 'restrict',
            },
          ],
        },
      ],
    });
    expect(created.status).toBe(200);
    expect(created.body.results.map((c: { recordSlug: string }) => c.recordSlug)).toEqual([
      'bulk-authors',
      'bulk-posts',
    ]);

    const refused = await post('/structures/bulk', {
      structures: [
        { name: 'Bulk Fine', properties: [] },
        { name: '', properties: [{ name: 'n', type: 'nope' }] },
        { name: 'Bulk Odd', properties: [], unknownField: 1 },
      ],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe('No collection was created');
    const fields = refused.body.error.details.map((d: { field: string }) => d.field);
    expect(fields).toEqual(
      expect.arrayContaining(['structures[1].name', 'structures[1].properties[0].type', 'structures[2].unknownField']),
    );
    expect(fields.every((f: string) => f.startsWith('structures[1].') || f.startsWith('structures[2].'))).toBe(true);
    expect((await call('GET', `${base()}/structures/slug/bulk-fine`, { token })).status).toBe(404);

    const taken = await post('/structures/bulk', {
      structures: [
        { name: 'Bulk Two', properties: [] },
        { name: 'X', recordSlug: 'bulk-authors', properties: [] },
      ],
    });
    expect(taken.status).toBe(409);
    expect(taken.body.error.message).toBe("structures[1]: A collection with recordSlug 'bulk-authors' already exists");
    expect((await call('GET', `${base()}/structures/slug/bulk-two`, { token })).status).toBe(404);
    expect((await post('/structures/bulk', { structures: [] })).status).toBe(400);
    const notObjects = await post('/structures/bulk', { structures: [{ name: 'Ok', properties: [] }, 5, null, []] });
    expect(notObjects.status).toBe(400);
    expect(notObjects.body.error.details).toEqual(
      [1, 2, 3].map((i) => ({ field: `structures[${i}]`, message: 'must be an object (a collection definition)' })),
    );
  });

  it('deletes collections in bulk unless one outside the set references them, and removes properties by name', async () => {
    // More cases: e2e/collection-operations.e2e-spec.ts.
    const [authors, posts] = (
      await post('/structures/bulk', {
        structures: [
          {
            name: 'Del Authors',
            properties: [
              { name: 'name', type: 'string' },
              { name: 'bio', type: 'string' },
              { name: 'born', type: 'number', immutable: true },
            ],
          },
          {
            name: 'Del Posts',
            properties: [
              {
                name: 'author',
                type: 'reference',
                target: 'del-authors',
                targetField: 'name',
                relationship: 'many-to-one',
                onDelete: 'restrict',
              },
            ],
          },
        ],
      })
    ).body.results as { id: string }[];
    const remove = (body: unknown) => call('DELETE', `${base()}/structures/bulk`, { token, body });

    const referenced = await remove({ ids: [authors!.id] });
    expect(referenced.status).toBe(200);
    expect(referenced.body).toMatchObject({ success: false, deleted: [], failed: 1 });
    expect(referenced.body.errors).toEqual([
      {
        field: 'ids[0]',
        error: { code: 'CONFLICT', message: "Collection 'del-authors' is referenced by del-posts.author" },
      },
    ]);
    expect((await call('GET', `${base()}/structures/${authors!.id}`, { token })).status).toBe(200);
    expect((await remove({ ids: ['nope'] })).status).toBe(400);

    // Properties: an unknown name is a 400; one a reference names and an immutable one are 409s, each named.
    const props = (body: unknown) => call('DELETE', `${base()}/structures/${authors!.id}/properties`, { token, body });
    const unknownName = await props({ names: ['bio', 'ghost'] });
    expect(unknownName.status).toBe(400);
    expect(unknownName.body.error.details).toEqual([
      { field: 'names[1]', message: "the collection has no property 'ghost'" },
    ]);
    expect((await props({ names: ['name'] })).status).toBe(409);
    expect((await props({ names: ['born'] })).status).toBe(409);
    const trimmed = await props({ names: ['bio'] });
    expect(trimmed.status).toBe(200);
    expect(trimmed.body.collection.properties.map((p: { name: string }) => p.name)).toEqual(['name', 'born']);

    // Together, the reference is inside the set: both go.
    const both = await remove({ ids: [authors!.id, posts!.id] });
    expect(both.status).toBe(200);
    expect(both.body.deleted.map((d: { id: string }) => d.id).sort()).toEqual([authors!.id, posts!.id].sort());
    expect((await call('GET', `${base()}/structures/${authors!.id}`, { token })).status).toBe(404);
  });

  it('enforces workspace isolation, permissions and id formats', async () => {
    const mine = await post('/structures', { name: 'Private', properties: [] });
    const crossRead = await call('GET', `${base()}/structures/${mine.body.id}`, { token: otherToken });
    expect(crossRead.status).toBe(403);
    // Even through its own workspace's URL, another workspace never sees it.
    const viaOwnUrl = await call('GET', `${base(otherWs)}/structures/${mine.body.id}`, { token: otherToken });
    expect(viaOwnUrl.status).toBe(404);
    const badId = await call('GET', `${base()}/structures/not-a-uuid`, { token });
    expect(badId.status).toBe(400);
    const noToken = await call('GET', `${base()}/structures`);
    expect(noToken.status).toBe(401);

    // A service account with no group holds no permission on structures.
    const account = await call('POST', `${stack.authUrl}/workspace/${ws}/api/v1/service-accounts`, {
      token,
      body: { name: 'no-rights' },
    });
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: account.body.clientId,
      client_secret: account.body.clientSecret,
    });
    const issued = await fetch(`${stack.authUrl}/oidc/token`, { method: 'POST', body: form });
    const saToken = ((await issued.json()) as { access_token: string }).access_token;
    const denied = await call('GET', `${base()}/structures`, { token: saToken });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('PERMISSION_DENIED');
  });
});

describe('per-collection indexes', () => {
  it('builds indexes for unique, indexed and search properties and statistics for every scalar one after a change, and drops them when it goes', async () => {
    const created = await post('/structures', {
      name: 'Indexed',
      defaultSearchField: 'title',
      properties: [
        { name: 'title', type: 'string' },
        { name: 'code', type: 'string', isUnique: true },
        { name: 'price', type: 'number', indexed: true },
        { name: 'plain', type: 'number', indexed: false },
      ],
    });
    expect(created.status).toBe(200);
    expect(created.body.properties.find((p: { name: string }) => p.name === 'price').indexed).toBe(true);
    expect(created.body.properties.find((p: { name: string }) => p.name === 'plain')).not.toHaveProperty('indexed');
    const prefix = `rx_${(created.body.id as string).replace(/-/g, '')}_`;
    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    const indexes = async () =>
      (
        await client.query<{ name: string }>(
          `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           WHERE i.indisvalid AND left(c.relname, length($1)) = $1`,
          [prefix],
        )
      ).rows.map((r) => r.name.slice(prefix.length).replace(/_[0-9a-f]{8}$/, ''));
    // Planner statistics, one per scalar property (apps/data/test/property-indexes.int-spec.ts checks their figures).
    const statistics = async () =>
      (
        await client.query<{ name: string }>(
          `SELECT stxname AS name FROM pg_statistic_ext WHERE left(stxname, length($1)) = $1`,
          [prefix],
        )
      ).rows.map((r) => r.name.slice(prefix.length).replace(/_[0-9a-f]{8}$/, ''));
    try {
      // Two key indexes (code, price), full text and trigram on title.
      await eventually(async () => {
        expect((await indexes()).sort()).toEqual(['fts', 'k', 'k', 'trgm']);
        expect(await statistics()).toEqual(['s', 's', 's', 's']);
        return true;
      });
      const removed = await call('DELETE', `${base()}/structures/${created.body.id}`, { token });
      expect(removed.status).toBe(200);
      await eventually(async () => {
        expect(await indexes()).toEqual([]);
        expect(await statistics()).toEqual([]);
        return true;
      });
    } finally {
      await client.end();
    }
  });
});
