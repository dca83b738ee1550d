import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

let stack: Stack;
const ws = `list-${Date.now().toString(36)}`;
let token: string;
let products: { id: string; recordSlug: string };
const ids: Record<string, string> = {};

const base = () => `${stack.baseUrl}/data/workspace/${ws}/api/v1`;
const get = (path: string) => call('GET', `${base()}${path}`, { token });
const names = (res: { body: { results: { data: { name: string } }[] } }) => res.body.results.map((r) => r.data.name);

/** A known data set: the expected rows of every query below are written out by hand. */
const DATA = [
  { name: 'anvil', price: 100, stock: 3, active: true, launched: '2024-01-15T00:00:00Z', tags: ['metal', 'heavy'] },
  { name: 'bolt', price: 2.5, stock: 1000, active: true, launched: '2025-06-01T12:00:00+02:00', tags: ['metal'] },
  { name: 'crate', price: 40, stock: 0, active: false, launched: '2023-03-10', tags: ['wood'] },
  { name: 'drill', price: 250, stock: 7, active: true, launched: '2026-02-01T00:00:00Z', tags: ['power', 'metal'] },
  { name: 'Eraser, large', price: 9, stock: 70, active: true, tags: [] },
];

beforeAll(async () => {
  stack = await startStack({ DATA_QUERY_OUTER_JOINS_ENABLED: 'true' });
  token = await adminWorkspaceToken(stack, ws);
  const created = await call('POST', `${base()}/structures`, {
    token,
    body: {
      name: 'Products',
      properties: [
        { name: 'name', type: 'string', required: true },
        { name: 'price', type: 'number' },
        { name: 'stock', type: 'number' },
        { name: 'active', type: 'boolean' },
        { name: 'launched', type: 'datetime' },
        { name: 'tags', type: 'array', items: { type: 'string' } },
      ],
    },
  });
  products = created.body;
  for (const data of DATA) {
    const res = await call('POST', `${base()}/records`, { token, body: { structureId: products.id, data } });
    expect(res.status).toBe(201);
    ids[data.name] = res.body.id;
  }
});

afterAll(async () => {
  await stack?.stop();
});

const list = (query: string) => get(`/records/slug/products?${query}`);

describe('the records list filter', () => {
  it.each([
    ['equality', 'filter=name:bolt', ['bolt']],
    ['numbers compare as numbers, not text', 'filter=price:>9', ['anvil', 'crate', 'drill']],
    ['>= and <', 'filter=price:>=40,price:<250', ['anvil', 'crate']],
    ['a range', 'filter=stock:3..70', ['anvil', 'drill', 'Eraser, large']],
    ['booleans', 'filter=active:false', ['crate']],
    ['datetimes compare as instants', 'filter=launched:>2025-06-01T09:00:00Z', ['bolt', 'drill']],
    ['datetime range across offsets', 'filter=launched:2024-01-01..2025-06-01T10:00:00Z', ['anvil', 'bolt']],
    ['contains, case-insensitive', 'filter=name:*RA*', ['crate', 'Eraser, large']],
    ['starts with', 'filter=name:dr*', ['drill']],
    ['ends with', 'filter=name:*t', ['bolt']],
    ['in', 'filter=name:[bolt,crate,zzz]', ['bolt', 'crate']],
    ['not in', 'filter=name:![bolt,crate]', ['anvil', 'drill', 'Eraser, large']],
    [
      'not equal includes absent fields',
      'filter=launched:!2023-03-10T00:00:00Z',
      ['anvil', 'bolt', 'drill', 'Eraser, large'],
    ],
    ['quoted values hold commas', 'filter=name:"Eraser, large"', ['Eraser, large']],
    ['comma is AND', 'filter=active:true,price:<50', ['bolt', 'Eraser, large']],
    ['system columns', `filter=id:${'$ID'}`, ['drill']],
  ])('%s', async (_label, query, expected) => {
    const res = await list(`${query.replace('$ID', ids['drill']!)}&sort=name`);
    expect(res.status).toBe(200);
    expect(names(res).sort()).toEqual([...expected].sort());
  });

  it('explains what is wrong, with the position of a syntax error', async () => {
    const cases: [string, string][] = [
      ['filter=price>9', 'expected ":" after the field name at position 5'],
      ['filter=price:[1,2', 'expected "," or "]" at position 10'],
      ['filter=colour:red', '"colour" is not a property of this collection'],
      ['filter=name:>a', 'operator gt does not apply to name (string)'],
      ['filter=price:cheap', 'eq on price expects a number, got "cheap"'],
      ['filter=launched:>soon', 'gt on launched expects an ISO 8601 date-time, got "soon"'],
      ['sort=colour', '"colour" is not a property of this collection'],
    ];
    for (const [query, message] of cases) {
      const res = await list(query);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details[0].message).toContain(message);
    }
  });
});

describe('sorting, paging and counting', () => {
  it('sorts on any list of fields, typed', async () => {
    expect(names(await list('sort=-price'))).toEqual(['drill', 'anvil', 'crate', 'Eraser, large', 'bolt']);
    expect(names(await list('sort=active,-stock'))).toEqual(['crate', 'bolt', 'Eraser, large', 'drill', 'anvil']);
    // An absent field sorts as null: first when ascending.
    expect(names(await list('sort=launched'))).toEqual(['Eraser, large', 'crate', 'anvil', 'bolt', 'drill']);
  });

  it('counts only when asked and pages with limit and offset', async () => {
    const first = await list('sort=name&limit=2');
    expect(first.body.pagination).toMatchObject({ limit: 2, offset: 0, total: null, hasMore: true });
    const counted = await list('sort=price&limit=2&offset=2&includeCount=true&filter=active:true');
    expect(counted.body.pagination).toMatchObject({ limit: 2, offset: 2, total: 4, hasMore: false, nextCursor: null });
    expect(names(counted)).toEqual(['anvil', 'drill']);
  });

  it('walks the collection with a cursor that stays correct while records come and go', async () => {
    const walk = await call('POST', `${base()}/structures`, {
      token,
      body: {
        name: 'Walk',
        properties: [
          { name: 'name', type: 'string' },
          { name: 'price', type: 'number' },
        ],
      },
    });
    const add = async (name: string, price: number) =>
      (await call('POST', `${base()}/records`, { token, body: { structureId: walk.body.id, data: { name, price } } }))
        .body.id as string;
    const walked: Record<string, string> = {};
    for (const [name, price] of [
      ['a', 50],
      ['b', 40],
      ['c', 40],
      ['d', 30],
      ['e', 10],
    ] as const)
      walked[name] = await add(name, price);
    const page = (cursor?: string) =>
      get(`/records/slug/walk?sort=-price,name&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    const p1 = await page();
    expect(names(p1)).toEqual(['a', 'b']);
    // Meanwhile: a record that sorts before the cursor arrives, one already seen goes, one ahead goes.
    await add('z', 900);
    await call('DELETE', `${base()}/records/${walked['a']}`, { token });
    await call('DELETE', `${base()}/records/${walked['d']}`, { token });
    const p2 = await page(p1.body.pagination.nextCursor);
    expect(names(p2)).toEqual(['c', 'e']);
    expect(p2.body.pagination).toMatchObject({ hasMore: false, nextCursor: null });

    const otherSort = await get(`/records/slug/walk?sort=name&cursor=${p1.body.pagination.nextCursor}`);
    expect(otherSort.status).toBe(400);
    expect(otherSort.body.error.details[0]).toMatchObject({ field: 'cursor' });
    expect((await get('/records/slug/walk?cursor=not-a-cursor')).status).toBe(400);
    expect(
      (await get(`/records/slug/walk?sort=-price,name&offset=2&cursor=${p1.body.pagination.nextCursor}`)).status,
    ).toBe(400);
  });

  it('answers out-of-range numbers and dates with a 400 or an empty page, never a 500', async () => {
    expect((await list('filter=version:>99999999999')).body.results).toEqual([]);
    expect((await list('offset=99999999999')).status).toBe(400);
    expect((await list('filter=launched:>0000-01-01')).status).toBe(400);
    const query = await call('POST', `${base()}/query`, { token, body: { query: 'FROM products OFFSET 99999999999' } });
    expect(query.status).toBe(400);
    const canonical = await call('POST', `${base()}/records/query`, {
      token,
      body: { resource: 'products', where: { version: { gt: 1e300 } }, page: { offset: 1e12 } },
    });
    expect(canonical.status).toBe(400);
    expect(canonical.body.error.details.map((d: { field: string }) => d.field)).toEqual(['page.offset']);
  });

  it('needs structureId on GET /records', async () => {
    const missing = await get('/records');
    expect(missing.status).toBe(400);
    expect(missing.body.error.details).toEqual([
      { field: 'structureId', message: expect.stringMatching(/is required/) },
    ]);
    const byId = await get(`/records?structureId=${products.id}&filter=name:bolt`);
    expect(names(byId)).toEqual(['bolt']);
  });
});

describe('the legacy URL-parameter filters', () => {
  it('answer with Deprecation, Sunset and Link, and filter like the new form', async () => {
    const res = await list('data.price[gt]=9&data.active=true&sort=-price&pageSize=10');
    expect(res.status).toBe(200);
    expect(res.headers.get('deprecation')).toBe('true');
    expect(res.headers.get('sunset')).toBe('Thu, 10 Sep 2026 23:59:59 GMT');
    expect(res.headers.get('link')).toMatch(/rel="successor-version"/);
    expect(names(res)).toEqual(['drill', 'anvil']);
    const inList = await list('data.name[in]=bolt,crate&sort=name');
    expect(names(inList)).toEqual(['bolt', 'crate']);
    const bad = await list('data.price[between]=1');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe('data.price[between]');
    const modern = await list('filter=name:bolt');
    expect(modern.headers.get('deprecation')).toBeNull();
  });
});

describe('schemaless collections', () => {
  it('compare every field as text', async () => {
    const c = await call('POST', `${base()}/structures`, {
      token,
      body: { name: 'Loose', schemaDiscoveryMode: 'schemaless', properties: [] },
    });
    for (const n of [9, 10, 100]) {
      await call('POST', `${base()}/records`, { token, body: { structureId: c.body.id, data: { n, label: `v${n}` } } });
    }
    const res = await get(`/records/slug/loose?filter=n:>2&sort=n`);
    expect(res.status).toBe(200);
    // As text, "10" and "100" are less than "2"; "9" is greater.
    expect(res.body.results.map((r: { data: { n: number } }) => r.data.n)).toEqual([9]);
    const sorted = await get('/records/slug/loose?sort=n');
    expect(sorted.body.results.map((r: { data: { n: number } }) => r.data.n)).toEqual([10, 100, 9]);
    expect((await get('/records/slug/loose?filter=anything.nested:x')).status).toBe(200);
  });
});

describe('POST /records/query (canonical definition)', () => {
  const query = (body: unknown) => call('POST', `${base()}/records/query`, { token, body });
  const dataNames = (res: { body: { data: { data: { name: string } }[] } }) =>
    res.body.data.map((r) => r.data.name).sort();

  it.each([
    ['a flat map is AND', { 'data.price': { gt: 9 }, 'data.active': { eq: true } }, ['anvil', 'drill']],
    ['or', { or: [{ 'data.name': { eq: 'bolt' } }, { 'data.stock': { lte: 3 } }] }, ['anvil', 'bolt', 'crate']],
    ['not', { not: { 'data.active': { eq: true } } }, ['crate']],
    ['exists: false matches absent fields', { 'data.launched': { exists: false } }, ['Eraser, large']],
    ['in / nin', { 'data.name': { in: ['bolt', 'drill'] }, 'data.price': { nin: [2.5] } }, ['drill']],
    [
      'startsWith / endsWith',
      { or: [{ 'data.name': { startsWith: 'cr' } }, { 'data.name': { endsWith: 'VIL' } }] },
      ['anvil', 'crate'],
    ],
    ['hasAny', { 'data.tags': { hasAny: ['wood', 'power'] } }, ['crate', 'drill']],
    ['hasAll', { 'data.tags': { hasAll: ['metal', 'heavy'] } }, ['anvil']],
    ['datetimes as instants', { 'data.launched': { gte: '2025-06-01T11:00:00+01:00' } }, ['bolt', 'drill']],
    ['system columns are bare', { createdAt: { gt: '2000-01-01' }, 'data.price': { lt: 5 } }, ['bolt']],
  ])('%s', async (_label, where, expected) => {
    const res = await query({ resource: 'products', where });
    expect(res.status).toBe(200);
    expect(dataNames(res)).toEqual(expected);
  });

  it('refuses bare data names, unknown properties, two operators and misfit types, naming each', async () => {
    const res = await query({
      resource: 'products',
      where: {
        price: { gt: 1 },
        'data.colour': { eq: 'red' },
        'data.stock': { gt: 1, lt: 5 },
        or: [{ 'data.name': { gt: 'a' } }, { 'data.price': { eq: '9' } }],
        'data.active': { between: [1, 2] },
      },
      sort: [{ field: 'data.price', direction: 'sideways' }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(
      [
        'where.price',
        'where.data.colour',
        'where.data.stock',
        'where.or[0].data.name.gt',
        'where.or[1].data.price.eq',
        'where.data.active.between',
        'sort[0].direction',
      ].sort(),
    );
    expect(res.body.error.details.find((d: { field: string }) => d.field === 'where.price').message).toMatch(
      /neither a system column .* nor a data.<field> path/,
    );
  });

  it('searches text, with typo tolerance through trigram similarity', async () => {
    const exact = await query({ resource: 'products', text: { query: 'drill', fields: ['data.name'] } });
    expect(dataNames(exact)).toEqual(['drill']);
    expect(dataNames(await query({ resource: 'products', text: { query: 'dril', fields: ['data.name'] } }))).toEqual(
      [],
    );
    const typo = await query({
      resource: 'products',
      text: { query: 'dril', fields: ['data.name'], typoTolerance: true },
    });
    expect(dataNames(typo)).toEqual(['drill']);
    const noField = await query({ resource: 'products', text: { query: 'x' } });
    expect(noField.status).toBe(400);
    expect(noField.body.error.details[0].field).toBe('text.fields');
  });

  it('sorts, selects, pages with a cursor and counts on request', async () => {
    const body = {
      resource: 'products',
      where: { 'data.price': { gte: 9 } },
      sort: [{ field: 'data.price', direction: 'desc' }],
      select: { fields: ['data.name', 'version'] },
      page: { limit: 2, includeCount: true },
    };
    const first = await query(body);
    expect(first.body.data).toEqual([
      { id: expect.any(String), version: 1, data: { name: 'drill' } },
      { id: expect.any(String), version: 1, data: { name: 'anvil' } },
    ]);
    expect(first.body.meta).toMatchObject({ limit: 2, total: 4, hasMore: true });
    const second = await query({ ...body, page: { limit: 2, cursor: first.body.meta.nextCursor } });
    expect(second.body.data.map((r: { data: { name: string } }) => r.data.name)).toEqual(['crate', 'Eraser, large']);
    expect(second.body.meta).toMatchObject({ hasMore: false, nextCursor: null });
    const otherSort = await query({ ...body, sort: [], page: { limit: 2, cursor: first.body.meta.nextCursor } });
    expect(otherSort.status).toBe(400);
    const unknown = await query({ resource: 'nothing-here' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('STRUCTURE_NOT_FOUND');
  });
});

describe('POST /query (string language)', () => {
  const run = (query: string, parameters?: Record<string, unknown>) =>
    call('POST', `${base()}/query`, { token, body: { query, ...(parameters ? { parameters } : {}) } });
  const rowNames = (res: { body: { data: { data: { name: string } }[] } }) => res.body.data.map((r) => r.data.name);

  it.each([
    ['FROM products WHERE price > 9 AND active = true ORDER BY price DESC', ['drill', 'anvil']],
    ["from products where name in ('bolt', 'crate') order by name", ['bolt', 'crate']],
    ['FROM products WHERE stock BETWEEN 3 AND 70 ORDER BY stock', ['anvil', 'drill', 'Eraser, large']],
    ["FROM products WHERE name CONTAINS 'RA' ORDER BY price", ['Eraser, large', 'crate']],
    ['FROM products WHERE launched IS NULL', ['Eraser, large']],
    ['FROM products WHERE NOT (active = true OR price < 10)', ['crate']],
    ["FROM products WHERE tags HAS ALL ('metal', 'heavy')", ['anvil']],
    ["FROM products WHERE SEARCH('drill') IN (name)", ['drill']],
    ["FROM products WHERE SEARCH FUZZY('dril') IN (name) AND price > 100", ['drill']],
    ['FROM products ORDER BY price DESC LIMIT 2 OFFSET 1', ['anvil', 'crate']],
  ])('%s', async (query, expected) => {
    const res = await run(query);
    expect(res.status).toBe(200);
    expect(rowNames(res)).toEqual(expected);
  });

  it('binds named parameters, checked by type without coercion', async () => {
    const ok = await run('FROM products WHERE name = :name AND price < :max', { name: 'bolt', max: 10 });
    expect(rowNames(ok)).toEqual(['bolt']);
    const wrongType = await run('FROM products WHERE price < :max', { max: '10' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.details[0]).toEqual({
      field: 'query@20',
      message: 'lt on price expects a number, got "10"',
    });
    const missing = await run('FROM products WHERE name = :name');
    expect(missing.body.error.details[0]).toEqual({ field: 'query@27', message: 'parameter :name is not given' });
  });

  it('groups with COUNT, SUM, AVG, MIN and MAX', async () => {
    const res = await run(
      'SELECT active, COUNT(*) AS n, SUM(price) AS total, AVG(stock), MIN(price), MAX(launched) FROM products GROUP BY active ORDER BY n DESC',
    );
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { active: true, n: 4, total: 361.5, avg_stock: 270, min_price: 2.5, max_launched: '2026-02-01T00:00:00.000Z' },
      { active: false, n: 1, total: 40, avg_stock: 0, min_price: 40, max_launched: '2023-03-10T00:00:00.000Z' },
    ]);
    const bad = await run('SELECT name, SUM(name) FROM products GROUP BY active');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { message: string }) => d.message)).toEqual([
      'SELECT name: a plain field must also be in GROUP BY',
      'SUM(name) needs a number field (it is string)',
    ]);
  });

  it('selects fields and includes references, filtered', async () => {
    const makers = await call('POST', `${base()}/structures`, {
      token,
      body: { name: 'Makers', properties: [{ name: 'country', type: 'string' }] },
    });
    const tools = await call('POST', `${base()}/structures`, {
      token,
      body: {
        name: 'Tools',
        properties: [
          { name: 'name', type: 'string' },
          { name: 'maker', type: 'reference', target: 'makers', relationship: 'many-to-one', onDelete: 'cascade' },
        ],
      },
    });
    const no = (
      await call('POST', `${base()}/records`, { token, body: { structureId: makers.body.id, data: { country: 'NO' } } })
    ).body.id;
    const se = (
      await call('POST', `${base()}/records`, { token, body: { structureId: makers.body.id, data: { country: 'SE' } } })
    ).body.id;
    for (const [name, maker] of [
      ['saw', no],
      ['axe', se],
    ]) {
      await call('POST', `${base()}/records`, { token, body: { structureId: tools.body.id, data: { name, maker } } });
    }
    const res = await run("SELECT name FROM tools INCLUDE maker FROM makers WHERE country = 'NO' ORDER BY name");
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { id: expect.any(String), data: { name: 'axe' } },
      { id: expect.any(String), data: { name: 'saw' } },
    ]);
    const full = await run("FROM tools INCLUDE maker FROM makers WHERE country = 'NO' ORDER BY name");
    expect(full.body.data.map((r: { data: { _expanded: { maker: unknown } } }) => r.data._expanded.maker)).toEqual([
      null,
      { id: no, data: { country: 'NO' } },
    ]);
    const wrong = await run('FROM tools INCLUDE maker FROM products');
    expect(wrong.status).toBe(400);
  });

  it('answers syntax errors with the position and what was expected', async () => {
    const res = await run('FROM products WHERE price >');
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].field).toBe('query@27');
    expect(res.body.error.details[0].message).toMatch(
      /^Syntax error at line 1, column 28 \(position 27\).*Expected: .*number/,
    );
    expect((await run('FROM nowhere')).status).toBe(404);
    expect((await run("FROM products WHERE colour = 'red'")).body.error.details[0].message).toBe(
      '"colour" is not a property of this collection',
    );
  });
});

describe('saved queries', () => {
  const saved = (path: string, body?: unknown) =>
    call('POST', `${base()}/saved-queries${path}`, { token, ...(body !== undefined ? { body } : {}) });
  const namesOf = (res: { body: { data: { data: { name: string } }[] } }) => res.body.data.map((r) => r.data.name);
  let id: string;

  beforeAll(async () => {
    const created = await saved('', {
      name: 'cheap-active',
      query: {
        resource: 'products',
        where: { 'data.price': { lt: '${max}' }, 'data.active': { eq: '${active}' } },
        sort: [{ field: 'data.price', direction: 'asc' }],
      },
      variables: { max: { type: 'number' }, active: { type: 'boolean', required: false } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'cheap-active', resource: 'products', deprecatedPlaceholders: false });
    id = created.body.id;
  });

  it('executes with typed variables; an optional one left out drops its condition', async () => {
    const run = await saved(`/${id}/execute`, { variables: { max: 50, active: true } });
    expect(run.status).toBe(200);
    expect(namesOf(run)).toEqual(['bolt', 'Eraser, large']);
    expect(run.body.meta).toMatchObject({ limit: 20, hasMore: false });
    expect(namesOf(await saved(`/${id}/execute`, { variables: { max: 50 } }))).toEqual([
      'bolt',
      'Eraser, large',
      'crate',
    ]);
    // The earlier canonical path.
    expect(namesOf(await saved(`/products/${id}/execute`, { variables: { max: 10 } }))).toEqual([
      'bolt',
      'Eraser, large',
    ]);
  });

  it('answers 422 for a missing required variable and 400 for a value of another type', async () => {
    const missing = await saved(`/${id}/execute`, { variables: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.error).toMatchObject({ code: 'UNPROCESSABLE', message: 'Missing required variable: max' });
    const wrong = await saved(`/${id}/execute`, { variables: { max: '50', colour: 'red' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details).toEqual([
      { field: 'variables.max', message: 'must be a number, got "50"' },
      { field: 'variables.colour', message: 'is not a variable of this query' },
    ]);
  });

  it('checks a definition when it is saved', async () => {
    const bad = await saved('', {
      name: 'broken',
      query: {
        resource: 'products',
        where: { 'data.price': { gt: '${low}' }, 'data.name': { eq: 'a ${x}' }, '${f}': { eq: 1 } },
      },
      variables: { low: { type: 'string' } },
    });
    expect(bad.status).toBe(400);
    // Every problem at once: the placeholders, then the definition checked with sample values.
    expect(bad.body.error.details).toEqual([
      { field: 'query.where.data.name.eq', message: 'a placeholder must be the whole value (${name})' },
      {
        field: 'query.where.${f}',
        message: 'field names and operators are literals: placeholders are not allowed here',
      },
      { field: 'query.where.data.price.gt', message: 'gt on data.price expects a number, got "sample"' },
    ]);
    const misfit = await saved('', {
      name: 'misfit',
      query: { resource: 'products', where: { 'data.price': { gt: '${low}' } } },
      variables: { low: { type: 'string' } },
    });
    expect(misfit.body.error.details).toEqual([
      { field: 'query.where.data.price.gt', message: 'gt on data.price expects a number, got "sample"' },
    ]);
    const undeclared = await saved('', {
      name: 'u',
      query: { resource: 'products', where: { 'data.price': { gt: '${nope}' } } },
    });
    expect(undeclared.body.error.details).toEqual([
      { field: 'variables.nope', message: 'is used in the query but not declared' },
    ]);
    const duplicate = await saved('', { name: 'cheap-active', query: { resource: 'products' } });
    expect(duplicate.status).toBe(409);
  });

  it('accepts the deprecated {{var}} form and flags it', async () => {
    const legacy = await saved('', {
      name: 'by-name',
      query: { resource: 'products', where: { 'data.name': { eq: '{{name}}' } } },
      variables: { name: { type: 'string' } },
    });
    expect(legacy.status).toBe(201);
    expect(legacy.body.deprecatedPlaceholders).toBe(true);
    expect(legacy.headers.get('deprecation')).toBe('true');
    expect(namesOf(await saved(`/${legacy.body.id}/execute`, { variables: { name: 'drill' } }))).toEqual(['drill']);
  });

  it('lists, tests without saving, and limits complexity', async () => {
    const list = await call('GET', `${base()}/saved-queries/products`, { token });
    expect(list.body.results.map((q: { name: string }) => q.name)).toEqual(['by-name', 'cheap-active']);
    const test = await saved('/products/test', {
      query: { where: { 'data.stock': { gte: '${n}' } }, sort: [{ field: 'data.stock', direction: 'desc' }] },
      variables: { n: { type: 'number' } },
      values: { n: 70 },
    });
    expect(test.status).toBe(200);
    expect(namesOf(test)).toEqual(['bolt', 'Eraser, large']);
    const many = await saved('/products/test', {
      query: { where: { and: Array.from({ length: 51 }, () => ({ 'data.price': { gt: 1 } })) } },
    });
    expect(many.status).toBe(400);
    expect(many.body.error.message).toBe('Query complexity limit exceeded');
  });

  it('refuses a legacy join with joinWhere with 422', async () => {
    const res = await saved('/products/test', {
      query: {
        join: {
          foreignSlug: 'makers',
          localField: 'maker',
          foreignField: 'id',
          joinWhere: { 'data.country': { eq: 'NO' } },
        },
      },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.message).toMatch(/re-author the query with joins and a top-level where/);
    expect(res.headers.get('deprecation')).toBe('true');
  });

  it('keeps the legacy slug route and the /smart-queries alias, with deprecation headers', async () => {
    const legacy = await saved(`/slug/products/execute/${id}`, { variables: { max: 10 } });
    expect(legacy.status).toBe(200);
    expect(legacy.headers.get('deprecation')).toBe('true');
    expect(legacy.headers.get('sunset')).toBe('Thu, 29 Oct 2026 23:59:59 GMT');
    expect(legacy.headers.get('link')).toBe(
      `</data/workspace/${ws}/api/v1/saved-queries/${id}/execute>; rel="successor-version"`,
    );
    expect(legacy.body.result.rows.map((r: { data: { name: string } }) => r.data.name)).toEqual([
      'bolt',
      'Eraser, large',
    ]);
    expect(legacy.body.result.meta).toMatchObject({ limit: 20 });
    expect(legacy.body.result.fields).toEqual(expect.arrayContaining(['name', 'price']));

    const alias = await call('POST', `${base()}/smart-queries/${id}/execute`, {
      token,
      body: { variables: { max: 10 } },
    });
    expect(alias.status).toBe(200);
    expect(alias.headers.get('deprecation')).toBe('true');
    expect(alias.headers.get('link')).toBe(
      `</data/workspace/${ws}/api/v1/saved-queries/${id}/execute>; rel="successor-version"`,
    );
    expect(namesOf(alias)).toEqual(['bolt', 'Eraser, large']);
    expect((await call('GET', `${base()}/saved-queries/products`, { token })).headers.get('deprecation')).toBeNull();

    // Refused before any handler (no token: the guard's 401), the alias still says it is going.
    const refused = await call('POST', `${base()}/smart-queries/${id}/execute`, { body: { variables: { max: 10 } } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('deprecation')).toBe('true');
    expect(refused.headers.get('link')).toBe(
      `</data/workspace/${ws}/api/v1/saved-queries/${id}/execute>; rel="successor-version"`,
    );
  });
});

describe('joins', () => {
  it('joins collections inner, left, right and full, under _joined.<alias>', async () => {
    const post = (path: string, body: unknown) => call('POST', `${base()}${path}`, { token, body });
    const writers = await post('/structures', { name: 'Writers', properties: [{ name: 'name', type: 'string' }] });
    const books = await post('/structures', {
      name: 'Books',
      properties: [
        { name: 'title', type: 'string' },
        { name: 'writerId', type: 'string', nullable: true },
      ],
    });
    const ann = (await post('/records', { structureId: writers.body.id, data: { name: 'Ann' } })).body.id;
    await post('/records', { structureId: writers.body.id, data: { name: 'Bea' } });
    await post('/records', { structureId: books.body.id, data: { title: 'A1', writerId: ann } });
    await post('/records', {
      structureId: books.body.id,
      data: { title: 'Orphan', writerId: '0b5f8a4e-1d7e-4a36-9a53-5f0d0f0c1a11' },
    });

    const run = (joinType: string) =>
      post('/saved-queries/books/test', {
        query: {
          joins: [{ foreignSlug: 'writers', localField: 'writerId', foreignField: 'id', alias: 'writer', joinType }],
          sort: [{ field: 'data.title', direction: 'asc' }],
        },
      });
    const pairs = (res: {
      body: { data: { data: { title: string } | null; _joined: { writer: { data: { name: string } } | null } }[] };
    }) => res.body.data.map((row) => [row.data?.title ?? null, row._joined.writer?.data.name ?? null]);
    expect(pairs(await run('inner'))).toEqual([['A1', 'Ann']]);
    expect(pairs(await run('left'))).toEqual([
      ['A1', 'Ann'],
      ['Orphan', null],
    ]);
    const right = await run('right');
    // A missing primary row sorts as null: first when ascending.
    expect(pairs(right)).toEqual([
      [null, 'Bea'],
      ['A1', 'Ann'],
    ]);
    expect(right.body.data[0].id).toBeNull();
    expect(pairs(await run('full'))).toEqual([
      [null, 'Bea'],
      ['A1', 'Ann'],
      ['Orphan', null],
    ]);

    // The legacy single join is promoted; identifier slots take literals only.
    const legacy = await post('/saved-queries/books/test', {
      query: { join: { foreignSlug: 'writers', localField: 'writerId', foreignField: 'id', alias: 'writer' } },
    });
    expect(legacy.status).toBe(200);
    expect(legacy.body.data).toHaveLength(1);
    expect(legacy.headers.get('deprecation')).toBe('true');
    expect(legacy.headers.get('link')).toBe('</docs/data.json#joins>; rel="successor-version"');
    // The spec announces no date of its own: it goes with the other saved-query forms.
    expect(legacy.headers.get('sunset')).toBe('Thu, 29 Oct 2026 23:59:59 GMT');
    const canonical = await post('/records/query', {
      resource: 'books',
      join: { foreignSlug: 'writers', localField: 'writerId', foreignField: 'id', alias: 'writer' },
    });
    expect(canonical.status).toBe(200);
    expect(canonical.headers.get('deprecation')).toBe('true');
    const current = await post('/records/query', {
      resource: 'books',
      joins: [{ foreignSlug: 'writers', localField: 'writerId', foreignField: 'id', alias: 'writer' }],
    });
    expect(current.headers.get('deprecation')).toBeNull();
    // Refused before any handler (no token), and a join of the wrong type: still told.
    const legacyJoin = { foreignSlug: 'writers', localField: 'writerId', foreignField: 'id' };
    const anonymous = await call('POST', `${base()}/records/query`, { body: { resource: 'books', join: legacyJoin } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('deprecation')).toBe('true');
    const anonymousSaved = await call('POST', `${base()}/saved-queries/books/test`, {
      body: { query: { join: legacyJoin } },
    });
    expect(anonymousSaved.status).toBe(401);
    expect(anonymousSaved.headers.get('deprecation')).toBe('true');
    const wrongType = await post('/records/query', { resource: 'books', join: 5 });
    expect(wrongType.status).toBe(400);
    expect(wrongType.headers.get('deprecation')).toBe('true');
    const slot = await post('/saved-queries', {
      name: 'bad-join',
      query: {
        resource: 'books',
        joins: [{ foreignSlug: '${target}', localField: 'writerId', foreignField: 'id', alias: 'w' }],
      },
      variables: { target: { type: 'string' } },
    });
    expect(slot.status).toBe(400);
    expect(slot.body.error.details).toEqual([
      { field: 'query.joins[0].foreignSlug', message: 'accepts literals only: placeholders are not allowed here' },
    ]);
    const unknown = await post('/records/query', {
      resource: 'books',
      joins: [{ foreignSlug: 'writers', localField: 'writerId', foreignField: 'data.age', alias: 'w' }],
    });
    expect(unknown.body.error.details).toEqual([
      { field: 'joins[0].foreignField', message: '"data.age" is not a property of writers' },
    ]);
  });
});
