import type { EntityManager } from 'typeorm';
import { KeyRing } from '@strata/crypto';
import { withServiceDataSource } from '@strata/db';
import {
  keyRingOf,
  type ReencryptionOptions,
  type ReencryptionReport,
  type ReencryptionTarget,
  resealBindingsStep,
  runReencryption,
  upgradeCommand,
  type UpgradeOutcome,
} from '@strata/platform';
import { MIGRATIONS, ORCHESTRATION_SCHEMA } from '../migrations/index.js';
import { secretBinding } from './orchestration-names.js';
import type { OrchestrationConfig } from '../orchestration.config.js';

interface TriggerRow {
  readonly key: string;
  readonly id: string;
  readonly trigger: Record<string, unknown>;
}

/**
 * `node dist/main.js reencrypt [--check]`: moves the sealed signing secrets of
 * orchestration triggers (current and every version) to the active key and their
 * purpose's binding (docs/runbooks.md).
 */
export function reencryptOrchestration(
  config: OrchestrationConfig,
  options: ReencryptionOptions = {},
): Promise<ReencryptionReport[]> {
  const source = { url: config.DATABASE_URL, schema: ORCHESTRATION_SCHEMA, entities: [], migrations: MIGRATIONS };
  return withServiceDataSource(source, (db) => {
    const ring = keyRingOf(config);
    return runReencryption(
      db,
      ring,
      [
        triggerSecrets(ring, 'orchestration.orchestrations', 'id', 'id', 't.id'),
        triggerSecrets(
          ring,
          'orchestration.orchestration_versions',
          'orchestration_id',
          "orchestration_id || ':' || lpad(version::text, 10, '0')",
          "t.orchestration_id || ':' || lpad(t.version::text, 10, '0')",
        ),
      ] as ReencryptionTarget<never>[],
      options,
    );
  });
}

function sealedSecret(row: TriggerRow): string | undefined {
  const secret = row.trigger['signingSecret'];
  return typeof secret === 'object' && secret !== null && typeof (secret as { value?: unknown }).value === 'string'
    ? (secret as { value: string }).value
    : undefined;
}

/** `keyExpr` orders the rows; `match` is the same expression on the alias `t` of the update. */
function triggerSecrets(
  ring: KeyRing,
  table: string,
  idColumn: string,
  keyExpr: string,
  match: string,
): ReencryptionTarget<TriggerRow> {
  return {
    name: table,
    async batch(db: EntityManager, after, limit, lock) {
      const rows = await db.query<{ key: string; id: string; trigger: Record<string, unknown> }[]>(
        `SELECT ${keyExpr} AS key, ${idColumn} AS id, trigger FROM ${table}
          WHERE ($1::text IS NULL OR ${keyExpr} > $1) ORDER BY ${keyExpr} LIMIT $2 ${lock ? 'FOR UPDATE SKIP LOCKED' : ''}`,
        [after?.key ?? null, limit],
      );
      return rows;
    },
    reseal(row) {
      const sealed = sealedSecret(row);
      if (sealed === undefined) return undefined;
      const moved = ring.reseal(sealed, secretBinding(row.id));
      if (moved === sealed) return undefined;
      return {
        ...row,
        trigger: {
          ...row.trigger,
          signingSecret: { value: moved, encrypted: true, keyVersion: KeyRing.versionOf(moved) },
        },
      };
    },
    async save(tx, rows) {
      await tx.query(
        `UPDATE ${table} t SET trigger = u.trigger
           FROM unnest($1::text[], $2::jsonb[]) AS u(key, trigger)
          WHERE ${match} = u.key`,
        [rows.map((r) => r.key), rows.map((r) => JSON.stringify(r.trigger))],
      );
    },
    census(row, verify) {
      const sealed = sealedSecret(row);
      if (sealed === undefined) return { versions: new Map(), stale: 0 };
      const stale = verify && ring.unseal(sealed, secretBinding(row.id)).binding > 0 ? 1 : 0;
      return { versions: new Map([[KeyRing.versionOf(sealed), 1]]), stale };
    },
    describe(row) {
      return `${table} ${row.key}`;
    },
  };
}

/**
 * `node dist/main.js upgrade`: the orchestration schema's due upgrade steps, after its
 * migrations, once the release serves (docs/runbooks.md, "Upgrade steps"): the
 * re-sealing of every envelope under its purpose's binding.
 */
export function upgradeOrchestration(
  config: OrchestrationConfig,
  write?: (line: string) => void,
): Promise<UpgradeOutcome> {
  const source = { url: config.DATABASE_URL, schema: ORCHESTRATION_SCHEMA };
  const steps = [resealBindingsStep(config, (options) => reencryptOrchestration(config, options))];
  return upgradeCommand('strata-orchestration', source, steps, write);
}
