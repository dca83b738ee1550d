import type { EntityManager } from 'typeorm';
import { KeyRing, type Binding } from '@strata/crypto';
import { withServiceDataSource } from '@strata/db';
import {
  type EnvelopeCensus,
  envelopeColumns,
  keyRingOf,
  type ReencryptionOptions,
  type ReencryptionReport,
  type ReencryptionTarget,
  resealBindingsStep,
  runReencryption,
  upgradeCommand,
  type UpgradeOutcome,
} from '@strata/platform';
import { COMPUTE_ENTITIES } from './compute-data-source.js';
import type { ComputeConfig } from './compute.config.js';
import type { JsonObject, JsonValue } from './json.js';
import { COMPUTE_SCHEMA, MIGRATIONS } from './migrations/index.js';
import { draftBindings } from './drafts/draft-secrets.js';
import { endpointSecretBinding } from './endpoints/endpoint-credentials.js';
import { documentBinding } from './run-documents/run-document-seal.js';
import { runParamsBinding } from './runs/run-params.js';
import { triggerBindings, type SealBindings } from './triggers/trigger-params.js';

/**
 * `node --no-node-snapshot dist/main.js reencrypt [--check]`: moves every envelope
 * compute holds to the active key and its purpose's binding (docs/runbooks.md):
 * run parameters, stored documents, endpoint signing secrets, and the sealed
 * parameters and signing secrets inside trigger metadata (current and every
 * version) and trigger drafts. The `upgrade` command's re-sealing step runs it too.
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
        binding: (row) => runParamsBinding(String(row['id'])),
        ring,
      }),
      envelopeColumns({
        table: 'compute.run_documents',
        key: 'id',
        columns: ['content'],
        binding: (row) => documentBinding(String(row['id'])),
        ring,
      }),
      envelopeColumns({
        table: 'compute.endpoint_credentials',
        key: 'trigger_id',
        columns: ['signing_secret'],
        binding: (row) => endpointSecretBinding(String(row['trigger_id'])),
        ring,
      }),
      triggerMetadata(ring, 'compute.triggers', 'id') as ReencryptionTarget<never>,
      triggerMetadata(ring, 'compute.trigger_versions', 'trigger_id') as ReencryptionTarget<never>,
      draftMetadata(ring) as ReencryptionTarget<never>,
    ];
    return runReencryption(db, ring, targets, options);
  });
}

interface MetadataRow {
  readonly key: string;
  /** The trigger or draft the sealed values are bound to. */
  readonly owner: string;
  readonly metadata: JsonObject;
}

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isSealed = (v: JsonValue | undefined): v is JsonObject & { value: string } =>
  isObject(v) && v['encrypted'] === true && typeof v['value'] === 'string';

/** The sealed values of trigger metadata with their bindings (trigger-params.ts). */
function sealedOf(
  bind: SealBindings,
  metadata: JsonObject,
): { at: (m: JsonObject, v: JsonObject) => JsonObject; value: JsonObject & { value: string }; binding: Binding }[] {
  const out: ReturnType<typeof sealedOf> = [];
  const params = metadata['params'];
  if (isObject(params)) {
    for (const [name, value] of Object.entries(params)) {
      if (isSealed(value)) {
        out.push({
          value,
          binding: bind.param(name),
          at: (m, v) => ({ ...m, params: { ...(m['params'] as JsonObject), [name]: v } }),
        });
      }
    }
  }
  const secret = metadata['signingSecret'];
  if (isSealed(secret)) {
    out.push({ value: secret, binding: bind.signingSecret, at: (m, v) => ({ ...m, signingSecret: v }) });
  }
  return out;
}

/** The envelopes inside trigger metadata (jsonb), keyed by `keyColumn` (and `version` for the versions table). */
function triggerMetadata(ring: KeyRing, table: string, keyColumn: string): ReencryptionTarget<MetadataRow> {
  const versioned = table.endsWith('versions');
  const keyExpr = versioned ? `${keyColumn}::text || ':' || lpad(version::text, 10, '0')` : `${keyColumn}::text`;
  return metadataTarget(ring, {
    name: table,
    bind: triggerBindings,
    async rows(db, after, limit, lock) {
      const rows = await db.query<{ key: string; owner: string; metadata: JsonObject }[]>(
        `SELECT ${keyExpr} AS key, ${keyColumn} AS owner, metadata FROM ${table}
          WHERE ($1::text IS NULL OR ${keyExpr} > $1) ORDER BY ${keyExpr} LIMIT $2 ${lock ? 'FOR UPDATE SKIP LOCKED' : ''}`,
        [after ?? null, limit],
      );
      return rows;
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
  });
}

/** The envelopes inside trigger drafts' `triggerMetadata` (drafts/draft-secrets.ts). */
function draftMetadata(ring: KeyRing): ReencryptionTarget<MetadataRow> {
  return metadataTarget(ring, {
    name: 'compute.drafts',
    bind: draftBindings,
    async rows(db, after, limit, lock) {
      return db.query<{ key: string; owner: string; metadata: JsonObject }[]>(
        `SELECT id::text AS key, id::text AS owner, data->'triggerMetadata' AS metadata FROM compute.drafts
          WHERE resource_type = 'function-triggers' AND jsonb_typeof(data->'triggerMetadata') = 'object'
            AND ($1::text IS NULL OR id::text > $1)
          ORDER BY id::text LIMIT $2 ${lock ? 'FOR UPDATE SKIP LOCKED' : ''}`,
        [after ?? null, limit],
      );
    },
    async save(tx, rows) {
      await tx.query(
        `UPDATE compute.drafts d SET data = jsonb_set(d.data, '{triggerMetadata}', u.metadata)
           FROM unnest($1::text[], $2::jsonb[]) AS u(key, metadata) WHERE d.id::text = u.key`,
        [rows.map((r) => r.key), rows.map((r) => JSON.stringify(r.metadata))],
      );
    },
  });
}

interface MetadataSource {
  readonly name: string;
  readonly bind: (owner: string) => SealBindings;
  rows(db: EntityManager, after: string | undefined, limit: number, lock: boolean): Promise<MetadataRow[]>;
  save(tx: EntityManager, rows: readonly MetadataRow[]): Promise<void>;
}

/** Moves the sealed values inside a metadata document to the active key, each under its purpose's binding. */
function metadataTarget(ring: KeyRing, source: MetadataSource): ReencryptionTarget<MetadataRow> {
  const sealedIn = (row: MetadataRow) => sealedOf(source.bind(row.owner), row.metadata);
  return {
    name: source.name,
    batch: (db, after, limit, lock) => source.rows(db, after?.key, limit, lock),
    reseal(row) {
      let metadata = row.metadata;
      let changed = false;
      for (const sealed of sealedIn(row)) {
        const moved = ring.reseal(sealed.value.value, sealed.binding);
        if (moved !== sealed.value.value) {
          metadata = sealed.at(metadata, { ...sealed.value, value: moved, keyVersion: KeyRing.versionOf(moved) });
          changed = true;
        }
      }
      return changed ? { ...row, metadata } : undefined;
    },
    save: (tx, rows) => source.save(tx, rows),
    census(row, verify): EnvelopeCensus {
      const versions = new Map<number, number>();
      let stale = 0;
      for (const sealed of sealedIn(row)) {
        const v = KeyRing.versionOf(sealed.value.value);
        versions.set(v, (versions.get(v) ?? 0) + 1);
        if (verify && ring.unseal(sealed.value.value, sealed.binding).binding > 0) stale++;
      }
      return { versions, stale };
    },
    describe(row) {
      return `${source.name} ${row.key}`;
    },
  };
}

/**
 * `node dist/main.js upgrade`: the compute schema's due upgrade steps, after its
 * migrations, once the release serves (docs/runbooks.md, "Upgrade steps"): the
 * re-sealing of every envelope under its purpose's binding.
 */
export function upgradeCompute(config: ComputeConfig, write?: (line: string) => void): Promise<UpgradeOutcome> {
  const source = { url: config.DATABASE_URL, schema: COMPUTE_SCHEMA };
  const steps = [resealBindingsStep(config, (options) => reencryptCompute(config, options))];
  return upgradeCommand('strata-compute', source, steps, write);
}
