import type { EntityManager } from 'typeorm';
import type { PropertyDefinition } from '@strata/contracts';
import { withServiceDataSource } from '@strata/db';
import {
  type ReencryptionOptions,
  type ReencryptionReport,
  type ReencryptionTarget,
  resealBindingsStep,
  runReencryption,
  upgradeCommand,
  type UpgradeOutcome,
} from '@strata/platform';
import type { DataConfig } from '../data.config.js';
import { DATA_SCHEMA, MIGRATIONS } from '../migrations/index.js';
import { RecordSecrets, type SecretSchema } from './record-secrets.js';
import { secretPaths } from './secret-paths.js';

interface RecordEnvelopes {
  id: string;
  collection_id: string;
  data: Record<string, unknown>;
}

interface VersionEnvelopes extends RecordEnvelopes {
  version: number;
}

/** A row worth looking at: its collection has secret fields ($1), or its data holds something shaped like an envelope. */
const holdsSecrets = (data: string) => `(r.collection_id = ANY($1::uuid[]) OR ${data}::text LIKE '%"sv1.%')`;

/**
 * The tables of the data service that hold key-ring envelopes: records and their
 * versions (a version's data is sealed as the record's was, bound to the same
 * record). The changelog, the changes of versions, events, stored upsert
 * responses and discovery samples hold secrets masked, never sealed.
 */
export function recordTargets(
  secrets: RecordSecrets,
  collections: ReadonlyMap<string, SecretSchema>,
): ReencryptionTarget<never>[] {
  const withSecrets = [...collections.values()].filter((c) => secretPaths(c.properties).length).map((c) => c.id);
  const schemaOf = (id: string): SecretSchema => collections.get(id) ?? { id, properties: [] };
  const census = (row: RecordEnvelopes, verify: boolean) => {
    const state = secrets.inspect(schemaOf(row.collection_id), row.id, row.data, verify);
    return { versions: state.versions, stale: state.legacyBound + state.unsealed };
  };
  const reseal = <Row extends RecordEnvelopes>(row: Row): Row | undefined => {
    const data = secrets.reseal(schemaOf(row.collection_id), row.id, row.data);
    return data ? { ...row, data } : undefined;
  };
  const json = (rows: readonly RecordEnvelopes[]) => rows.map((r) => JSON.stringify(r.data));
  const records: ReencryptionTarget<RecordEnvelopes> = {
    name: 'data.records',
    batch: (db: EntityManager, after, limit, lock) =>
      db.query(
        `SELECT r.id, r.collection_id, r.data FROM data.records r
          WHERE ${holdsSecrets('r.data')} AND ($2::uuid IS NULL OR r.id > $2)
          ORDER BY r.id LIMIT $3${lock ? ' FOR UPDATE SKIP LOCKED' : ''}`,
        [withSecrets, after?.id ?? null, limit],
      ),
    reseal,
    save: async (tx, rows) => {
      await tx.query(
        `UPDATE data.records r SET data = v.data FROM unnest($1::uuid[], $2::jsonb[]) AS v(id, data) WHERE r.id = v.id`,
        [rows.map((r) => r.id), json(rows)],
      );
    },
    census,
    describe: (row) => `record ${row.id}`,
  };
  const versions: ReencryptionTarget<VersionEnvelopes> = {
    name: 'data.record_versions',
    batch: (db: EntityManager, after, limit, lock) =>
      db.query(
        `SELECT v.record_id AS id, v.version, r.collection_id, v.data FROM data.record_versions v
           JOIN data.records r ON r.id = v.record_id
          WHERE ${holdsSecrets('v.data')}
            AND ($2::uuid IS NULL OR (v.record_id, v.version) > ($2, $3))
          ORDER BY v.record_id, v.version LIMIT $4${lock ? ' FOR UPDATE OF v SKIP LOCKED' : ''}`,
        [withSecrets, after?.id ?? null, after?.version ?? 0, limit],
      ),
    reseal,
    save: async (tx, rows) => {
      await tx.query(
        `UPDATE data.record_versions t SET data = v.data
           FROM unnest($1::uuid[], $2::int[], $3::jsonb[]) AS v(record_id, version, data)
          WHERE t.record_id = v.record_id AND t.version = v.version`,
        [rows.map((r) => r.id), rows.map((r) => r.version), json(rows)],
      );
    },
    census,
    describe: (row) => `record ${row.id} version ${row.version}`,
  };
  return [records, versions] as ReencryptionTarget<never>[];
}

/**
 * `node dist/main.js reencrypt [--check]`: moves every record secret to the active
 * key and to its record's binding, then reports what is left per key version
 * (docs/runbooks.md). Safe beside running replicas and other runs.
 */
export async function reencryptData(
  config: DataConfig,
  options: ReencryptionOptions = {},
): Promise<ReencryptionReport[]> {
  const source = { url: config.DATABASE_URL, schema: DATA_SCHEMA, entities: [], migrations: MIGRATIONS };
  return withServiceDataSource(source, async (db) => {
    const secrets = new RecordSecrets(config);
    // Deleted collections too: their records keep their envelopes.
    const rows = await db.query<{ id: string; properties: PropertyDefinition[] }[]>(
      'SELECT id, properties FROM data.collections',
    );
    const collections = new Map(rows.map((c) => [c.id, c]));
    return runReencryption(db, secrets.keyRing, recordTargets(secrets, collections), options);
  });
}

/**
 * `node dist/main.js upgrade`: the data schema's due upgrade steps, after its
 * migrations, once the release serves (docs/runbooks.md, "Upgrade steps"): the
 * re-sealing of every envelope under its purpose's binding.
 */
export function upgradeData(config: DataConfig, write?: (line: string) => void): Promise<UpgradeOutcome> {
  const source = { url: config.DATABASE_URL, schema: DATA_SCHEMA };
  const steps = [resealBindingsStep(config, (options) => reencryptData(config, options))];
  return upgradeCommand('strata-data', source, steps, write);
}
