import { createHash } from 'node:crypto';
import type { PropertyDefinition } from '@strata/contracts';
import { PROPERTY_NAME } from '../../schema/validate-properties.js';

/** One index the records table should hold for a collection. */
export interface IndexSpec {
  readonly name: string;
  /** `CREATE INDEX CONCURRENTLY IF NOT EXISTS …` */
  readonly create: string;
}

/** The prefix of every per-collection index name (collection id without dashes: 63-byte names fit). */
export function indexPrefix(collectionId: string): string {
  return `rx_${collectionId.replace(/-/g, '')}_`;
}

function name(collectionId: string, kind: 'k' | 'fts' | 'trgm' | 's', property: string): string {
  return `${indexPrefix(collectionId)}${kind}_${createHash('sha256').update(property).digest('hex').slice(0, 8)}`;
}

/** Whether a property gets a key index: unique, single references, and those marked `indexed`. */
export function wantsKeyIndex(p: PropertyDefinition): boolean {
  if (p.type === 'array' || p.type === 'object') return false;
  if (p.type === 'string' && p.isSecret) return false;
  if (p.type === 'reference' && p.relationship === 'many-to-many') return false;
  return p.isUnique || p.type === 'reference' || p.indexed === true;
}

/** Whether a property gets planner statistics: every top-level scalar one a query may compare or group on. */
export function wantsStatistics(p: PropertyDefinition): boolean {
  if (p.type === 'array' || p.type === 'object') return false;
  if (p.type === 'string' && p.isSecret) return false;
  if (p.type === 'reference' && p.relationship === 'many-to-many') return false;
  return true;
}

function checkedId(id: string): string {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id))
    throw new Error('not a collection id');
  return id;
}

function checkedPath(property: string): string {
  if (!PROPERTY_NAME.test(property)) throw new Error(`not a property name: ${property}`);
  return `'{${property}}'::text[]`;
}

/** One extended-statistics object the records table should hold for a collection. */
export interface StatisticsSpec {
  readonly name: string;
  /** `CREATE STATISTICS IF NOT EXISTS …` */
  readonly create: string;
}

/**
 * Planner statistics per collection: for each scalar property, one extended
 * statistics object on the three expressions the compiler writes for it, the key
 * `COALESCE(data #> '{p}', 'null')` (filters and sorts), the value
 * `data #> '{p}'` (GROUP BY) and the type guard of typed ranges
 * `jsonb_typeof(<key>)`. Without them PostgreSQL knows nothing of a value
 * inside `data`: it ignores the statistics of partial expression indexes, so it
 * guesses an equality matches 0.5% of the collection, and that a GROUP BY makes
 * as many groups as there are distinct `data` documents (every row). The first
 * guess walks the default order filtering instead of using the key index; the
 * second sorts the whole collection (on disk) instead of hashing a few groups;
 * and it takes the type guard for 0.5% too, so a range with sort and limit on an
 * indexed property reads and sorts every match instead of walking the key index
 * in order. (The guard's figure is over the whole table: the share of records of
 * every collection whose value at that path has the type.)
 * ANALYZE fills them (the indexer runs it after creating one; autovacuum later).
 */
export function desiredStatistics(collection: {
  readonly id: string;
  readonly properties: readonly PropertyDefinition[];
}): StatisticsSpec[] {
  const id = checkedId(collection.id);
  return collection.properties.filter(wantsStatistics).map((p) => {
    const n = name(id, 's', p.name);
    const path = checkedPath(p.name);
    return {
      name: n,
      create: `CREATE STATISTICS IF NOT EXISTS data.${n} (ndistinct) ON (COALESCE(data #> ${path}, 'null'::jsonb)), (data #> ${path}), (jsonb_typeof(COALESCE(data #> ${path}, 'null'::jsonb))) FROM data.records`,
    };
  });
}

/**
 * The indexes a collection's records should have, each partial to the
 * collection's live records. The expressions are written exactly as the query
 * compiler writes them once PostgreSQL has folded the bound path into a
 * constant (compile-where.ts `dataExpressions`, compile-text.ts), which is what
 * lets the planner match them:
 * - a key index `(COALESCE(data #> '{p}', 'null'), id)` per indexed property: typed
 *   equality, ranges, in, sort and keyset pages on that property;
 * - for the `defaultSearchField`, a GIN full-text index on its `simple` tsvector and a
 *   trigram GIN index on its text (contains / startsWith / endsWith).
 * Property names are identifiers (PROPERTY_NAME) and the id a UUID; both are checked
 * again here before they reach DDL text.
 */
export function desiredIndexes(collection: {
  readonly id: string;
  readonly properties: readonly PropertyDefinition[];
  readonly defaultSearchField?: string | null;
}): IndexSpec[] {
  const id = checkedId(collection.id);
  const scope = `WHERE collection_id = '${id}'::uuid AND deleted_at IS NULL`;
  const path = checkedPath;
  const specs: IndexSpec[] = [];
  for (const p of collection.properties) {
    if (!wantsKeyIndex(p)) continue;
    const n = name(id, 'k', p.name);
    specs.push({
      name: n,
      create: `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${n} ON data.records ((COALESCE(data #> ${path(p.name)}, 'null'::jsonb)), id) ${scope}`,
    });
  }
  const search = collection.properties.find((p) => p.name === collection.defaultSearchField);
  if (search?.type === 'string' && !search.isSecret) {
    const fts = name(id, 'fts', search.name);
    const trgm = name(id, 'trgm', search.name);
    specs.push(
      {
        name: fts,
        create: `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${fts} ON data.records USING gin (to_tsvector('simple', COALESCE(data #>> ${path(search.name)}, ''))) ${scope}`,
      },
      {
        name: trgm,
        create: `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${trgm} ON data.records USING gin ((data #>> ${path(search.name)}) data.gin_trgm_ops) ${scope}`,
      },
    );
  }
  return specs;
}
