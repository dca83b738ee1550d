import type { EntityManager } from 'typeorm';
import { KeyRing } from '@strata/crypto';
import { withServiceDataSource } from '@strata/db';
import {
  envelopeColumns,
  keyRingOf,
  runReencryption,
  type EnvelopeCensus,
  type ReencryptionOptions,
  type ReencryptionReport,
  type ReencryptionTarget,
} from '@strata/platform';
import { COMPUTE_ENTITIES } from './compute-data-source.js';
import type { ComputeConfig } from './compute.config.js';
import type { JsonObject, JsonValue } from './json.js';
import { COMPUTE_SCHEMA, MIGRATIONS } from './migrations/index.js';

/**
 * `node --no-node-snapshot dist/main.js reencrypt [--check]`: moves every envelope
 * compute holds to the active key (docs/runbooks.md): run parameters, stored
 * documents, endpoint signing secrets, and the sealed parameters and signing
 * secrets inside trigger metadata (current and every version).
 */
export function reencryptCompute(
  config: ComputeConfig,
  options: ReencryptionOptions = {},
): Promise<ReencryptionReport[]> {
  const source = {
    url: config.DATABASE_URL,
    schema: COMPUTE_SCHEMA,
    entities: COMPUTE_ENTITIES,
    migrations: MIGRATIONS,
  };
  return withServiceDataSource(source, (db) => {
    const ring = keyRingOf(config);
    const targets: ReencryptionTarget<never>[] = [
      envelopeColumns({
        table: 'compute.runs',
        key: 'id',
        columns: ['params'],
        binding: (row) => `compute.runs.params:${String(row['id'])}`,
        ring,
      }),
      envelopeColumns({
        table: 'compute.run_documents',
        key: 'id',
        columns: ['content'],
        binding: (row) => `compute.run_documents:${String(row['id'])}`,
        ring,
      }),
      envelopeColumns({
        table: 'compute.endpoint_credentials',
        key: 'trigger_id',
        columns: ['signing_secret'],
        binding: (row) => `compute.endpoint_credentials.signing_secret:${String(row['trigger_id'])}`,
        ring,
      }),
      triggerMetadata(ring, 'compute.triggers', 'id') as ReencryptionTarget<never>,
      triggerMetadata(ring, 'compute.trigger_versions', 'trigger_id') as ReencryptionTarget<never>,
    ];
    return runReencryption(db, ring, targets, options);
  });
}

interface MetadataRow {
  readonly key: string;
  readonly triggerId: string;
  readonly metadata: JsonObject;
}

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isSealed = (v: JsonValue | undefined): v is JsonObject & { value: string } =>
  isObject(v) && v['encrypted'] === true && typeof v['value'] === 'string';

/** The sealed values of a trigger's metadata with their bindings (trigger-params.ts). */
function sealedOf(
  triggerId: string,
  metadata: JsonObject,
): { at: (m: JsonObject, v: JsonObject) => JsonObject; value: JsonObject & { value: string }; binding: string }[] {
  const out: ReturnType<typeof sealedOf> = [];
  const params = metadata['params'];
  if (isObject(params)) {
    for (const [name, value] of Object.entries(params)) {
      if (isSealed(value)) {
        out.push({
          value,
          binding: `compute.triggers.params:${triggerId}:${name}`,
          at: (m, v) => ({ ...m, params: { ...(m['params'] as JsonObject), [name]: v } }),
        });
      }
    }
  }
  const secret = metadata['signingSecret'];
  if (isSealed(secret)) {
    out.push({
      value: secret,
      binding: `compute.triggers.params:${triggerId}:#signingSecret`,
      at: (m, v) => ({ ...m, signingSecret: v }),
    });
  }
  return out;
}

/** The envelopes inside trigger metadata (jsonb), keyed by `keyColumn` (and `version` for the versions table). */
function triggerMetadata(ring: KeyRing, table: string, keyColumn: string): ReencryptionTarget<MetadataRow> {
  const versioned = table.endsWith('versions');
  const keyExpr = versioned ? `${keyColumn}::text || ':' || lpad(version::text, 10, '0')` : `${keyColumn}::text`;
  return {
    name: table,
    async batch(db: EntityManager, after, limit, lock) {
      const rows = await db.query<{ key: string; trigger_id: string; metadata: JsonObject }[]>(
        `SELECT ${keyExpr} AS key, ${keyColumn} AS trigger_id, metadata FROM ${table}
          WHERE ($1::text IS NULL OR ${keyExpr} > $1) ORDER BY ${keyExpr} LIMIT $2 ${lock ? 'FOR UPDATE SKIP LOCKED' : ''}`,
        [after?.key ?? null, limit],
      );
      return rows.map((r) => ({ key: r.key, triggerId: r.trigger_id, metadata: r.metadata }));
    },
    reseal(row) {
      let metadata = row.metadata;
      let changed = false;
      for (const sealed of sealedOf(row.triggerId, row.metadata)) {
        const moved = ring.reencrypt(sealed.value.value, sealed.binding);
        if (moved !== sealed.value.value) {
          metadata = sealed.at(metadata, { ...sealed.value, value: moved, keyVersion: KeyRing.versionOf(moved) });
          changed = true;
        }
      }
      return changed ? { ...row, metadata } : undefined;
    },
    async save(tx, rows) {
      const match = versioned
        ? `t.trigger_id::text || ':' || lpad(t.version::text, 10, '0') = u.key`
        : 't.id::text = u.key';
      await tx.query(
        `UPDATE ${table} t SET metadata = u.metadata
           FROM unnest($1::text[], $2::jsonb[]) AS u(key, metadata) WHERE ${match}`,
        [rows.map((r) => r.key), rows.map((r) => JSON.stringify(r.metadata))],
      );
    },
    census(row, verify): EnvelopeCensus {
      const versions = new Map<number, number>();
      for (const sealed of sealedOf(row.triggerId, row.metadata)) {
        const v = KeyRing.versionOf(sealed.value.value);
        versions.set(v, (versions.get(v) ?? 0) + 1);
        if (verify) ring.decrypt(sealed.value.value, sealed.binding);
      }
      return { versions, stale: 0 };
    },
    describe(row) {
      return `${table} ${row.key}`;
    },
  };
}
