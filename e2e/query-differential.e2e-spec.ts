/**
 * The differential check of issue 4, as a new user would run it: a data set
 * with every property type is loaded through the API into two workspaces, then
 * generated queries in every form (list filter, canonical, string language,
 * saved queries) are compared with the rows a plain-JavaScript model of the
 * documented semantics says they must return, in order. Wrong rows, a 500, or
 * a row from the other workspace fail the test. The seed is fixed, so a failure
 * reproduces; change SEED to explore.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';
import {
  compareRows,
  conditionArb,
  matches,
  toCanonical,
  toFilter,
  toLanguage,
  toSaved,
  treeArb,
  type Cond,
  type Data,
  type FieldSpec,
  type Json,
  type ModelRow,
  type SortSpec,
  type Tree,
} from './support/query-model.js';

const SEED = 20261121;
let stack: Stack;
const run = Date.now().toString(36);
const wsA = `diff-a-${run}`;
const wsB = `diff-b-${run}`;
const tokens: Record<string, string> = {};
const rows: ModelRow[] = [];
const otherIds = new Set<string>();

const base = (ws: string) => `${stack.baseUrl}/data/workspace/${ws}/api/v1`;
const post = (path: string, body: unknown, ws = wsA) =>
  call('POST', `${base(ws)}${path}`, { token: tokens[ws]!, body });

const data = (name: string) => (row: ModelRow) => row.data[name];
const FIELDS: FieldSpec[] = [
  { name: 'data.name', kind: 'string', get: data('name') },
  { name: 'data.qty', kind: 'number', get: data('qty') },
  { name: 'data.ok', kind: 'boolean', get: data('ok') },
  { name: 'data.at', kind: 'datetime', get: data('at') },
  { name: 'data.tags', kind: 'array', get: data('tags') },
  { name: 'data.dims', kind: 'object', get: data('dims') },
  {
    name: 'data.dims.w',
    kind: 'number',
    get: (r) => (r.data.dims as Record<string, Json> | undefined)?.w,
  },
  {
    name: 'data.dims.label',
    kind: 'string',
    get: (r) => (r.data.dims as Record<string, Json> | undefined)?.label,
  },
  { name: 'data.maker', kind: 'reference', get: data('maker') },
  { name: 'data.note', kind: 'string', get: data('note') },
  { name: 'id', kind: 'uuid', get: (r) => r.id },
  { name: 'version', kind: 'number', get: (r) => r.data.__version },
];
const SORTABLE = FIELDS.filter((f) => ['string', 'number', 'boolean', 'datetime'].includes(f.kind));

const WORDS = [
  'alpha',
  'Alpha beta',
  'gamma_ray',
  '50% off',
  'a,b:c',
  'star*',
  '[br]',
  'quo"te',
  'back\\slash',
  'EPSILON',
];

/** Record data with every property type, fields often absent, a few JSON nulls. */
function recordArb(makers: readonly string[]): fc.Arbitrary<Data> {
  const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });
  return fc
    .record({
      name: fc.constantFrom(...WORDS),
      qty: maybe(fc.oneof(fc.integer({ min: -20, max: 120 }), fc.constantFrom(2.5, -0.5, 0))),
      ok: maybe(fc.boolean()),
      at: maybe(
        fc.integer({ min: Date.UTC(2023, 0, 1), max: Date.UTC(2026, 11, 31) }).map((ms) => new Date(ms).toISOString()),
      ),
      tags: maybe(fc.uniqueArray(fc.constantFrom('red', 'green', 'blue', 'Red'), { maxLength: 3 })),
      dims: maybe(fc.record({ w: fc.integer({ min: 0, max: 9 }), label: fc.constantFrom('small', 'Large', 'x') })),
      maker: maybe(fc.constantFrom(...makers)),
      note: maybe(fc.oneof(fc.constant(null), fc.constantFrom('', 'n/a', 'Check me'))),
    })
    .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)) as Data);
}

async function loadWorkspace(ws: string, count: number, seed: number): Promise<ModelRow[]> {
  tokens[ws] = await adminWorkspaceToken(stack, ws);
  const makers = await post('/structures', { name: 'Makers', properties: [{ name: 'name', type: 'string' }] }, ws);
  const makerIds: string[] = [];
  for (const name of ['acme', 'globex', 'initech']) {
    const res = await post('/records', { structureId: makers.body.id, data: { name } }, ws);
    makerIds.push(res.body.id);
  }
  const items = await post(
    '/structures',
    {
      name: 'Items',
      properties: [
        { name: 'name', type: 'string', required: true },
        { name: 'qty', type: 'number' },
        { name: 'ok', type: 'boolean' },
        { name: 'at', type: 'datetime' },
        { name: 'tags', type: 'array', items: { type: 'string' } },
        {
          name: 'dims',
          type: 'object',
          properties: [
            { name: 'w', type: 'number' },
            { name: 'label', type: 'string' },
          ],
        },
        { name: 'maker', type: 'reference', target: 'makers', relationship: 'many-to-one', onDelete: 'restrict' },
        { name: 'note', type: 'string', nullable: true },
      ],
    },
    ws,
  );
  expect(items.status).toBe(200);
  const out: ModelRow[] = [];
  for (const d of fc.sample(recordArb(makerIds), { numRuns: count, seed })) {
    const res = await post('/records', { structureId: items.body.id, data: d }, ws);
    expect(res.status).toBe(201);
    out.push({ id: res.body.id, createdAt: res.body.createdAt, data: { ...d, __version: 1 } });
  }
  // Every fifth record moves on a version, with a new quantity, so that version and updates are exercised.
  for (const [i, row] of out.entries()) {
    if (i % 5 !== 0) continue;
    const res = await call('PATCH', `${base(ws)}/records/${row.id}`, {
      token: tokens[ws],
      body: { data: { qty: i } },
    });
    expect(res.status).toBe(200);
    out[i] = { ...row, data: { ...row.data, qty: i, __version: 2 } };
  }
  return out;
}

beforeAll(async () => {
  stack = await startStack();
  rows.push(...(await loadWorkspace(wsA, 60, SEED)));
  for (const r of await loadWorkspace(wsB, 15, SEED + 1)) otherIds.add(r.id);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

afterAll(() => {
  // Most generated queries select some rows but not all of them.
  expect(shapes.some).toBeGreaterThan((shapes.none + shapes.all) * 1.5);
});

/** How many expected answers were empty, everything, or some rows: a test whose queries all match nothing proves little. */
const shapes = { none: 0, all: 0, some: 0 };

/** The ids a query must return, in order. */
function expected(tree: Tree | undefined, sort: SortSpec): string[] {
  const ids = rows
    .filter((r) => !tree || matches(r, tree))
    .sort((a, b) => compareRows(a, b, sort))
    .map((r) => r.id);
  shapes[ids.length === 0 ? 'none' : ids.length === rows.length ? 'all' : 'some']++;
  return ids;
}

const sortArb = fc.record({
  field: fc.constantFrom(...SORTABLE),
  direction: fc.constantFrom('asc' as const, 'desc' as const),
});
const treeOf = (depth: number) => treeArb(conditionArb(FIELDS, rows), depth);
const sample = <T>(arb: fc.Arbitrary<T>, numRuns: number, offset: number) =>
  fc.sample(arb, { numRuns, seed: SEED + offset });

/** Compares one answer with the model, with enough context in the failure to reproduce it. */
function check(
  label: string,
  request: unknown,
  res: { status: number; body: unknown },
  ids: string[] | undefined,
  want: string[],
): void {
  const leaked = (ids ?? []).filter((id) => otherIds.has(id));
  const error = res.status === 200 ? undefined : res.body;
  expect({ label, request, status: res.status, error, leaked }).toEqual({
    label,
    request,
    status: 200,
    error: undefined,
    leaked: [],
  });
  expect({ label, request, ids }).toEqual({ label, request, ids: want });
}

const idsOf = (rowsOut: { id: string }[]) => rowsOut.map((r) => r.id);

describe('generated queries agree with the model in every form', () => {
  it('canonical definitions (POST /records/query), with the count', async () => {
    for (const [tree, sort] of sample(fc.tuple(treeOf(3), sortArb), 120, 1)) {
      const request = {
        resource: 'items',
        where: toCanonical(tree),
        sort: [{ field: sort.field.name, direction: sort.direction }],
        page: { limit: 100, includeCount: true },
      };
      const res = await post('/records/query', request);
      const want = expected(tree, sort);
      check('canonical', request, res, res.body.data && idsOf(res.body.data), want);
      expect(res.body.meta.total).toBe(want.length);
    }
  });

  it('the string language (POST /query), every value a named parameter', async () => {
    for (const [tree, sort] of sample(fc.tuple(treeOf(3), sortArb), 120, 2)) {
      const { where, parameters } = toLanguage(tree);
      const request = {
        query: `FROM items WHERE ${where} ORDER BY ${sort.field.name} ${sort.direction.toUpperCase()} LIMIT 100`,
        parameters,
      };
      const res = await post('/query', request);
      check('language', request, res, res.body.data && idsOf(res.body.data), expected(tree, sort));
    }
  });

  it('IS NULL in the string language means absent or JSON null; exists means present', async () => {
    const note = FIELDS.find((f) => f.name === 'data.note')!;
    const sort: SortSpec = { field: FIELDS.find((f) => f.name === 'id')!, direction: 'asc' };
    const absent: Tree = { cond: { field: note, op: 'exists', value: false } };
    const isNull: Tree = { or: [absent, { cond: { field: note, op: 'eq', value: null } }] };
    const cases: [string, Tree][] = [
      ['data.note IS NULL', isNull],
      ['data.note IS NOT NULL', { not: isNull }],
      ['data.note = NULL', { cond: { field: note, op: 'eq', value: null } }],
    ];
    for (const [where, tree] of cases) {
      const request = { query: `FROM items WHERE ${where} ORDER BY id LIMIT 100` };
      const res = await post('/query', request);
      check('IS NULL', request, res, res.body.data && idsOf(res.body.data), expected(tree, sort));
    }
    expect(rows.some((r) => r.data.note === null)).toBe(true);
  });

  it('the records list filter (AND of terms)', async () => {
    const filterConds = fc
      .array(
        conditionArb(
          FIELDS.filter((f) => f.name !== 'version'),
          rows,
        ),
        { minLength: 1, maxLength: 3 },
      )
      .filter((conds) => toFilter(conds) !== undefined);
    let ran = 0;
    for (const [conds, sort] of sample(fc.tuple(filterConds, sortArb), 100, 3)) {
      const filter = toFilter(conds)!;
      const sortParam = `${sort.direction === 'desc' ? '-' : ''}${sort.field.name}`;
      const request = `/records/slug/items?filter=${encodeURIComponent(filter)}&sort=${encodeURIComponent(sortParam)}&limit=100`;
      const res = await call('GET', `${base(wsA)}${request}`, { token: tokens[wsA]! });
      const tree: Tree = { and: conds.map((cond: Cond) => ({ cond })) };
      check('filter', request, res, res.body.results && idsOf(res.body.results), expected(tree, sort));
      ran++;
    }
    expect(ran).toBe(100);
  });

  it('saved queries with typed variables, tested and saved then executed', async () => {
    const cases = sample(fc.tuple(treeOf(2), sortArb), 60, 4);
    for (const [i, [tree, sort]] of cases.entries()) {
      const { where, variables, values } = toSaved(tree);
      const query = { where, sort: [{ field: sort.field.name, direction: sort.direction }], page: { limit: 100 } };
      const want = expected(tree, sort);
      const tested = await post('/saved-queries/items/test', { query, variables, values });
      check('saved test', { query, values }, tested, tested.body.data && idsOf(tested.body.data), want);
      if (i % 6 !== 0) continue;
      const created = await post('/saved-queries', {
        name: `q${i}`,
        query: { resource: 'items', ...query },
        variables,
      });
      expect(created.status).toBe(201);
      const executed = await post(`/saved-queries/${created.body.id}/execute`, { variables: values });
      check('saved execute', { query, values }, executed, executed.body.data && idsOf(executed.body.data), want);
    }
  });

  it('cursor walks return the same rows as one page, in order', async () => {
    for (const [tree, sort] of sample(fc.tuple(treeOf(2), sortArb), 25, 5)) {
      const request = {
        resource: 'items',
        where: toCanonical(tree),
        sort: [{ field: sort.field.name, direction: sort.direction }],
      };
      const walked: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 20; pages++) {
        const res = await post('/records/query', { ...request, page: { limit: 7, ...(cursor ? { cursor } : {}) } });
        expect(res.status).toBe(200);
        walked.push(...idsOf(res.body.data));
        cursor = res.body.meta.nextCursor ?? undefined;
        if (!cursor) break;
      }
      expect({ request, walked }).toEqual({ request, walked: expected(tree, sort) });
    }
  });
});
