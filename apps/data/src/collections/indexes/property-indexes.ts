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

function name(collectionId: string, kind: 'k' | 'fts' | 'trgm', property: string): string {
  return `${indexPrefix(collectionId)}${kind}_${createHash('sha256').update(property).digest('hex').slice(0, 8)}`;
}

/** Whether a property gets a key index: unique, single references, and those marked `indexed`. */
export function wantsKeyIndex(p: PropertyDefinition): boolean {
  if (p.type === 'array' || p.type === 'object') return false;
  if (p.type === 'string' && p.isSecret) return false;
  if (p.type === 'reference' && p.relationship === 'many-to-many') return false;
  return p.isUnique || p.type === 'reference' || p.indexed === true;
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
  const id = collection.id;
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id))
    throw new Error('not a collection id');
  const scope = `WHERE collection_id = '${id}'::uuid AND deleted_at IS NULL`;
  const path = (property: string) => {
    if (!PROPERTY_NAME.test(property)) throw new Error(`not a property name: ${property}`);
    return `'{${property}}'::text[]`;
  };
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
