/**
 * The per-collection indexes against a real PostgreSQL: the indexer builds and
 * drops them as the definition changes and repairs an invalid one, and the
 * planner uses them for the SQL the query compiler writes (the bound path and
 * collection id folded into constants). Plans are read with sequential scans
 * switched off, which shows that an index can serve the query, not how fast.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { PropertyDefinition } from '@strata/contracts';
import { issueWorkspaceScope, migrateService, serviceDataSourceOptions } from '@strata/db';
import { createTestDatabase, type TestDatabase } from '@strata/testing';
import { PropertyIndexer } from '../src/collections/indexes/property-indexer.js';
import { desiredIndexes, desiredStatistics, indexPrefix } from '../src/collections/indexes/property-indexes.js';
import { compileAggregate } from '../src/compiler/compile-aggregate.js';
import { DATA_SCHEMA, MIGRATIONS } from '../src/migrations/index.js';
import { compileSelect, type CompilableQuery, type TypedSortKey } from '../src/compiler/compile-select.js';
import type { TypedWhere } from '../src/compiler/compile-where.js';

let db: TestDatabase;
let ds: DataSource;
let indexer: PropertyIndexer;
const ws = 'indexes';
const collectionId = randomUUID();

const common = { required: false, nullable: false, isUnique: false, immutable: false };
const PROPERTIES: PropertyDefinition[] = [
  { ...common, id: 'p1', name: 'sku', type: 'string', isUnique: true, isSecret: false },
  {
    ...common,
    id: 'p2',
    name: 'price',
    type: 'number',
    indexed: true,
    exclusiveMinimum: false,
    exclusiveMaximum: false,
  },
  { ...common, id: 'p3', name: 'title', type: 'string', isSecret: false },
  {
    ...common,
    id: 'p4',
    name: 'maker',
    type: 'reference',
    target: 'makers',
    targetField: 'id',
    relationship: 'many-to-one',
    onDelete: 'restrict',
  },
  {
    ...common,
    id: 'p5',
    name: 'tags',
    type: 'array',
    items: { type: 'string' },
    strictProperties: true,
    uniqueItems: false,
  },
];

async function indexNames(): Promise<{ name: string; valid: boolean }[]> {
  return ds.query(
    `SELECT c.relname AS name, i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE left(c.relname, length($1)) = $1 ORDER BY 1`,
    [indexPrefix(collectionId)],
  );
}

async function statisticsNames(): Promise<string[]> {
  const rows = await ds.query<{ name: string }[]>(
    `SELECT stxname AS name FROM pg_statistic_ext WHERE left(stxname, length($1)) = $1 ORDER BY 1`,
    [indexPrefix(collectionId)],
  );
  return rows.map((r) => r.name);
}

async function setDefinition(properties: PropertyDefinition[], defaultSearchField: string | null): Promise<void> {
  await ds.query('UPDATE data.collections SET properties = $2, default_search_field = $3 WHERE id = $1', [
    collectionId,
    JSON.stringify(properties),
    defaultSearchField,
  ]);
}

beforeAll(async () => {
  db = await createTestDatabase('strata_idx');
  await migrateService({ url: db.url, schema: DATA_SCHEMA, entities: [], migrations: MIGRATIONS });
  ds = await new DataSource(
    serviceDataSourceOptions({ url: db.url, schema: DATA_SCHEMA, entities: [], migrations: [] }),
  ).initialize();
  indexer = new PropertyIndexer(ds);
  await ds.query(
    `INSERT INTO data.collections (id, workspace_slug, record_slug, name, properties, status, schema_discovery_mode,
       schema_discovery_config, enable_versioning, default_search_field, tags, metadata, created_by, last_updated_by)
     VALUES ($1, $2, 'items', 'Items', $3, 'active', 'strict', '{}', false, 'title', '{}', '{}', 'test', 'test')`,
    [collectionId, ws, JSON.stringify(PROPERTIES)],
  );
  // 3000 records of this collection among 3000 of another, so that the planner has a choice.
  const other = randomUUID();
  await ds.query(
    `INSERT INTO data.collections (id, workspace_slug, record_slug, name, properties, status, schema_discovery_mode,
       schema_discovery_config, enable_versioning, tags, metadata, created_by, last_updated_by)
     VALUES ($1, $2, 'other', 'Other', '[]', 'active', 'strict', '{}', false, '{}', '{}', 'test', 'test')`,
    [other, ws],
  );
  await ds.query(
    `INSERT INTO data.records (id, workspace_slug, collection_id, data, created_by, updated_by)
     SELECT gen_random_uuid(), $1, CASE WHEN i % 2 = 0 THEN $2::uuid ELSE $3::uuid END,
       jsonb_build_object('sku', 'SKU-' || i, 'price', i % 1000, 'title', 'widget number ' || i,
                          'maker', 'maker-' || (i % 50), 'tags', jsonb_build_array('t' || (i % 7))),
       'test', 'test'
     FROM generate_series(1, 6000) i`,
    [ws, collectionId, other],
  );
}, 60_000);

afterAll(async () => {
  await ds?.destroy();
  await db?.drop();
});

describe('PropertyIndexer', () => {
  it('builds a key index per unique, indexed and reference property, and full-text and trigram indexes for the search field', async () => {
    await indexer.reconcile(collectionId);
    const names = await indexNames();
    expect(names).toHaveLength(5);
    expect(names.every((n) => n.valid)).toBe(true);
    expect(names.filter((n) => n.name.includes('_k_'))).toHaveLength(3);
    expect(names.filter((n) => n.name.includes('_fts_'))).toHaveLength(1);
    expect(names.filter((n) => n.name.includes('_trgm_'))).toHaveLength(1);
    await ds.query('ANALYZE data.records');
  });

  it('makes planner statistics for every scalar property (not the array), filled by its ANALYZE', async () => {
    const expected = desiredStatistics({ id: collectionId, properties: PROPERTIES }).map((s) => s.name);
    expect(expected).toHaveLength(4);
    expect(await statisticsNames()).toEqual([...expected].sort());
    const [filled] = await ds.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM pg_statistic_ext s JOIN pg_statistic_ext_data d ON d.stxoid = s.oid
       WHERE left(s.stxname, length($1)) = $1 AND d.stxdexpr IS NOT NULL`,
      [indexPrefix(collectionId)],
    );
    expect(filled!.n).toBe(4);
  });

  describe('the planner estimates values inside data from them', () => {
    const estimate = async (sql: string, params: unknown[]): Promise<string> => {
      const rows = await ds.query<{ 'QUERY PLAN': string }[]>(`EXPLAIN ${sql}`, params);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    };
    /** The estimated rows of the first plan line that matches. */
    const rowsOf = (plan: string, line: RegExp): number =>
      Number(/rows=(\d+)/.exec(plan.split('\n').find((l) => line.test(l)) ?? '')?.[1] ?? NaN);

    it('a GROUP BY on a property: the number of its values, hashed, not a sort of every row', async () => {
      const { sql, params } = compileAggregate({
        scope: issueWorkspaceScope(ws),
        collectionId,
        groups: [{ name: 'maker', field: { kind: 'data', path: ['maker'] } }],
        aggregates: [{ alias: 'n', fn: 'count', field: null, type: null }],
        order: [],
        limit: 1000,
      });
      const plan = await estimate(sql, params);
      // 50 makers; without the statistics PostgreSQL guesses one group per distinct `data` (3000).
      expect(rowsOf(plan, /Aggregate/)).toBeLessThanOrEqual(100);
      expect(plan).toContain('HashAggregate');
      expect(plan).not.toContain('data.collections');
    });

    it('a range with sort and limit on a key: the key index walked in order, no sort of every match', async () => {
      const { sql, params } = compileSelect({
        scope: issueWorkspaceScope(ws),
        collectionId,
        where: { condition: { field: { kind: 'data', path: ['price'] }, op: 'gte', value: 900, type: 'number' } },
        sort: [{ field: { kind: 'data', path: ['price'] }, type: 'number', direction: 'desc' }],
        limit: 20,
      });
      const plan = await estimate(sql, params);
      const name = desiredIndexes({ id: collectionId, properties: PROPERTIES }).find((i) =>
        i.create.includes(`'{price}'`),
      )!.name;
      // 10% of the collection matches; the type guard is not taken for a 0.5% filter on top.
      expect(plan).toContain(`Index Scan Backward using ${name}`);
      expect(plan).not.toMatch(/top-N|Bitmap/);
    });

    it('an equality on a key: about the rows that match (60), not a fixed 0.5% guess', async () => {
      const { sql, params } = compileSelect({
        scope: issueWorkspaceScope(ws),
        collectionId,
        where: {
          condition: { field: { kind: 'data', path: ['maker'] }, op: 'eq', value: 'maker-7', type: 'reference' },
        },
        sort: [],
        limit: 20,
      });
      const plan = await estimate(sql, params);
      const matched = rowsOf(plan, /Index Scan|Bitmap Heap Scan|Seq Scan on records/);
      expect(matched).toBeGreaterThanOrEqual(30);
      expect(matched).toBeLessThanOrEqual(120);
    });
  });

  describe('the planner uses them for compiled queries', () => {
    const plan = async (q: Partial<CompilableQuery>): Promise<string> => {
      const { sql, params } = compileSelect({
        scope: issueWorkspaceScope(ws),
        collectionId,
        sort: [],
        limit: 20,
        ...q,
      });
      const runner = ds.createQueryRunner();
      await runner.connect();
      try {
        await runner.query('SET enable_seqscan = off');
        const rows = (await runner.query(`EXPLAIN ${sql}`, params)) as { 'QUERY PLAN': string }[];
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      } finally {
        await runner.query('RESET enable_seqscan');
        await runner.release();
      }
    };
    const cond = (path: string, op: string, value: unknown, type: string): TypedWhere =>
      ({ condition: { field: { kind: 'data', path: [path] }, op, value, type } }) as TypedWhere;
    /** The name of the index of `kind` on `property`. */
    const index = (kind: string, property: string): string =>
      desiredIndexes({ id: collectionId, properties: PROPERTIES, defaultSearchField: 'title' }).find(
        (i) => i.name.includes(`_${kind}_`) && i.create.includes(`'{${property}}'`),
      )!.name;
    const byPrice: TypedSortKey = { field: { kind: 'data', path: ['price'] }, type: 'number', direction: 'asc' };

    it.each<[string, Partial<CompilableQuery>, [string, string]]>([
      ['number equality', { where: cond('price', 'eq', 7, 'number') }, ['k', 'price']],
      ['number range', { where: cond('price', 'gt', 995, 'number') }, ['k', 'price']],
      ['in', { where: cond('price', 'in', [3, 4], 'number') }, ['k', 'price']],
      ['unique string equality', { where: cond('sku', 'eq', 'SKU-42', 'string') }, ['k', 'sku']],
      ['reference equality', { where: cond('maker', 'eq', 'maker-7', 'reference') }, ['k', 'maker']],
      ['sorting on an indexed property, no sort step', { sort: [byPrice] }, ['k', 'price']],
      [
        'full-text search on the default search field',
        { text: { query: 'number 42', fields: [{ kind: 'data', path: ['title'] }], typoTolerance: false } },
        ['fts', 'title'],
      ],
      [
        'contains on the default search field',
        { where: cond('title', 'contains', 'ber 12', 'string') },
        ['trgm', 'title'],
      ],
    ])('%s', async (_label, query, [kind, property]) => {
      const explained = await plan(query);
      const name = index(kind, property);
      if (query.sort?.length) {
        expect(explained).toContain(`Index Scan using ${name}`);
        expect(explained).not.toMatch(/Sort/);
      } else {
        // The index is searched with the condition, not merely walked.
        expect(explained).toMatch(
          new RegExp(`(Index Scan using|Bitmap Index Scan on) ${name}[^\\n]*\\n\\s+Index Cond:`),
        );
      }
    });
  });

  it('drops indexes a definition no longer wants, rebuilds an invalid one, and drops all when the collection goes', async () => {
    const without = PROPERTIES.map((p): PropertyDefinition => {
      if (p.name !== 'price') return p;
      const { indexed: _dropped, ...rest } = p;
      return rest;
    });
    await setDefinition(without, null);
    await indexer.reconcile(collectionId);
    expect(
      (await indexNames()).map((n) => n.name.replace(/_[0-9a-f]{8}$/, '').replace(/^rx_[0-9a-f]{32}_/, '')),
    ).toEqual(['k', 'k']);
    // price keeps its statistics (still a scalar property); dropping it from the definition drops them.
    const fewer = without.filter((p) => p.name !== 'price');
    await setDefinition(fewer, null);
    await indexer.reconcile(collectionId);
    expect(await statisticsNames()).toEqual(
      desiredStatistics({ id: collectionId, properties: fewer })
        .map((s) => s.name)
        .sort(),
    );
    expect(await statisticsNames()).toHaveLength(3);

    // A build cut off by a crash leaves an invalid index behind: the next reconciliation rebuilds it.
    const [first] = await indexNames();
    await ds.query(`UPDATE pg_index SET indisvalid = false WHERE indexrelid = $1::regclass`, [`data.${first!.name}`]);
    await indexer.reconcile(collectionId);
    expect(await indexNames()).toEqual([{ name: first!.name, valid: true }, expect.objectContaining({ valid: true })]);

    await ds.query('UPDATE data.collections SET deleted_at = now() WHERE id = $1', [collectionId]);
    await indexer.reconcileAll();
    expect(await indexNames()).toEqual([]);
    expect(await statisticsNames()).toEqual([]);
  });
});
