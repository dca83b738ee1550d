import type { DataSource, EntityManager } from 'typeorm';
import { EnvelopeError, KeyRing, type Binding } from '@strata/crypto';
import { keyRingOf, type KeyRingSettings } from '../config/key-ring.config.js';

/** What one stored row holds, against the ring. */
export interface EnvelopeCensus {
  /** Its envelopes by key version. */
  readonly versions: ReadonlyMap<number, number>;
  /**
   * Values to rewrite although their key may be the active one: envelopes bound
   * the way an older release bound them, plain values where a secret belongs.
   */
  readonly stale: number;
}

/** A table (or part of one) holding key-ring envelopes, as `reencrypt` walks it. */
export interface ReencryptionTarget<Row> {
  /** Shown in the report: `data.records`, `webhooks.subscriptions`. */
  readonly name: string;
  /**
   * The rows after `after` (from the start when undefined) in a fixed key order,
   * at most `limit`. With `lock`, locked FOR UPDATE SKIP LOCKED: a row that a
   * writer or another run holds is passed over (a write seals the row anew under
   * the active key; the census after the pass counts what is left).
   */
  batch(db: EntityManager, after: Row | undefined, limit: number, lock: boolean): Promise<Row[]>;
  /**
   * The row with its values under the active key and current binding, or
   * undefined when it has nothing to move. Throws an EnvelopeError when a value
   * does not open.
   */
  reseal(row: Row): Row | undefined;
  /** Writes a batch's resealed rows (one statement). */
  save(tx: EntityManager, rows: readonly Row[]): Promise<void>;
  /**
   * Counts the row's envelopes by key version (from their headers). With
   * `verify`, also opens each one (an EnvelopeError when one does not) and counts
   * what is bound the old way.
   */
  census(row: Row, verify: boolean): EnvelopeCensus;
  /** Names a row in the report (ids only, never a value). */
  describe(row: Row): string;
}

export interface ReencryptionReport {
  readonly target: string;
  /** Rows rewritten by this run. */
  readonly rewritten: number;
  /** Envelopes per key version after the run. */
  readonly envelopes: Readonly<Record<string, number>>;
  /** Values still to rewrite: envelopes of another version than the active one, and stale ones. */
  readonly remaining: number;
  /** Rows holding a value that does not open (tampered, copied from elsewhere, or of a version missing from the ring). */
  readonly unreadable: readonly string[];
}

export interface ReencryptionOptions {
  /**
   * Only count, rewriting nothing, and open every envelope on the way: a value
   * that does not open, or is bound the old way, shows. What to run before
   * removing a key version.
   */
  readonly check?: boolean;
  /**
   * Rewrite, then open every envelope in the count after it, so that values
   * still bound the old way (written meanwhile by a replica of an earlier
   * release, or in a row that was locked) count as remaining: what the upgrade
   * step runs (upgrade-steps.ts).
   */
  readonly verify?: boolean;
  readonly batchSize?: number;
}

/**
 * Moves every envelope of `targets` to the ring's active key (and current
 * binding), then counts what is left. Each batch is its own transaction with its
 * rows locked FOR UPDATE SKIP LOCKED and written back in one statement, so the
 * services keep writing meanwhile, any number of runs (or replicas) may go at
 * once without waiting on each other or rewriting a row twice, a crash rolls
 * back only the batch in flight, and running again only does what is still to do.
 */
export async function runReencryption(
  db: DataSource,
  ring: KeyRing,
  targets: readonly ReencryptionTarget<never>[],
  options: ReencryptionOptions = {},
): Promise<ReencryptionReport[]> {
  const size = options.batchSize ?? 200;
  const reports: ReencryptionReport[] = [];
  for (const target of targets as readonly ReencryptionTarget<unknown>[]) {
    const unreadable = new Set<string>();
    const opened = <T>(row: unknown, work: () => T): T | undefined => {
      try {
        return work();
      } catch (err) {
        if (!(err instanceof EnvelopeError)) throw err;
        unreadable.add(target.describe(row));
        return undefined;
      }
    };
    let rewritten = 0;
    if (!options.check) {
      let after: unknown;
      for (;;) {
        const rows = await db.transaction(async (tx) => {
          const batch = await target.batch(tx, after, size, true);
          const changed = batch.flatMap((row) => opened(row, () => target.reseal(row)) ?? []);
          if (changed.length) await target.save(tx, changed);
          rewritten += changed.length;
          return batch;
        });
        if (rows.length === 0) break;
        after = rows.at(-1);
      }
    }
    const envelopes = new Map<number, number>();
    let stale = 0;
    let after: unknown;
    for (;;) {
      const rows = await target.batch(db.manager, after, size, false);
      if (rows.length === 0) break;
      for (const row of rows) {
        const census = opened(row, () => target.census(row, (options.check ?? false) || (options.verify ?? false)));
        if (!census) continue;
        for (const [version, n] of census.versions) envelopes.set(version, (envelopes.get(version) ?? 0) + n);
        stale += census.stale;
      }
      after = rows.at(-1);
    }
    const old = [...envelopes].filter(([v]) => v !== ring.activeVersion).reduce((n, [, count]) => n + count, 0);
    reports.push({
      target: target.name,
      rewritten,
      envelopes: Object.fromEntries([...envelopes].sort(([a], [b]) => a - b).map(([v, n]) => [String(v), n])),
      remaining: old + stale,
      unreadable: [...unreadable],
    });
  }
  return reports;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/;

/**
 * A table whose envelopes sit in text columns, each bound where its row says
 * (a subscription's id, a signing key's kid). Table, key and column names are
 * the service's own constants.
 */
export function envelopeColumns(spec: {
  readonly table: string;
  readonly key: string;
  readonly columns: readonly string[];
  readonly binding: (row: Readonly<Record<string, unknown>>, column: string) => Binding;
  readonly ring: KeyRing;
}): ReencryptionTarget<never> {
  for (const name of [spec.table, spec.key, ...spec.columns]) {
    if (!IDENTIFIER.test(name)) throw new Error(`not an identifier: ${name}`);
  }
  type Row = Record<string, unknown> & { readonly _key: string };
  const envelopes = (row: Row) =>
    spec.columns.flatMap((column) => (typeof row[column] === 'string' ? [[column, row[column]] as const] : []));
  const target: ReencryptionTarget<Row> = {
    name: spec.table,
    batch: (db, after, limit, lock) =>
      db.query(
        `SELECT ${spec.key}::text AS _key, ${spec.key}, ${spec.columns.join(', ')} FROM ${spec.table}
          WHERE $1::text IS NULL OR ${spec.key}::text > $1
          ORDER BY ${spec.key}::text LIMIT $2${lock ? ' FOR UPDATE SKIP LOCKED' : ''}`,
        [after?._key ?? null, limit],
      ),
    reseal: (row) => {
      let changed = false;
      const out: Row = { ...row };
      for (const [column, envelope] of envelopes(row)) {
        out[column] = spec.ring.reseal(envelope, spec.binding(row, column));
        if (out[column] !== envelope) changed = true;
      }
      return changed ? out : undefined;
    },
    save: async (tx, rows) => {
      const sets = spec.columns.map((column) => `${column} = v.${column}`).join(', ');
      const arrays = spec.columns.map((_, i) => `$${i + 2}::text[]`).join(', ');
      await tx.query(
        `UPDATE ${spec.table} t SET ${sets} FROM unnest($1::text[], ${arrays}) AS v(_key, ${spec.columns.join(', ')})
          WHERE t.${spec.key}::text = v._key`,
        [rows.map((r) => r._key), ...spec.columns.map((column) => rows.map((r) => r[column] ?? null))],
      );
    },
    census: (row, verify) => {
      const versions = new Map<number, number>();
      let stale = 0;
      for (const [column, envelope] of envelopes(row)) {
        const version = KeyRing.versionOf(envelope);
        versions.set(version, (versions.get(version) ?? 0) + 1);
        if (verify && spec.ring.has(version) && spec.ring.unseal(envelope, spec.binding(row, column)).binding > 0) {
          stale++;
        }
      }
      return { versions, stale };
    },
    describe: (row) => `${spec.key} ${row._key}`,
  };
  return target as ReencryptionTarget<never>;
}

/** The line of a report that `reencrypt` prints. */
export function describeReencryption(report: ReencryptionReport, activeVersion: number): string {
  const versions = Object.entries(report.envelopes)
    .map(([v, n]) => `v${v}${Number(v) === activeVersion ? ' (active)' : ''}: ${n}`)
    .join(', ');
  return [
    `${report.target}: rewrote ${report.rewritten}`,
    `envelopes ${versions || 'none'}`,
    `remaining ${report.remaining}`,
    `unreadable ${report.unreadable.length}${report.unreadable.length ? ` (${report.unreadable.join(', ')})` : ''}`,
  ].join('; ');
}

/**
 * Prints the reports of a `reencrypt` command and answers its exit code: 0 when no
 * value is left on another key version (or stale) and none is unreadable, 1
 * otherwise (run it again; see docs/runbooks.md before removing a key version).
 */
export function printReencryption(
  service: string,
  reports: readonly ReencryptionReport[],
  ring: KeyRing,
  checkOnly: boolean,
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): number {
  for (const report of reports) write(`${service}: ${describeReencryption(report, ring.activeVersion)}`);
  const remaining = reports.reduce((n, r) => n + r.remaining, 0);
  const unreadable = reports.reduce((n, r) => n + r.unreadable.length, 0);
  const done = remaining === 0 && unreadable === 0;
  const others = ring.versions.filter((v) => v !== ring.activeVersion);
  const verdict = done
    ? `nothing left on other key versions${others.length ? ` (version ${others.join(', ')} holds nothing here)` : ''}`
    : `${remaining} value(s) still to move, ${unreadable} unreadable: run again, see docs/runbooks.md`;
  write(`${service}: ${checkOnly ? 'checked' : 're-encrypted'} under key version ${ring.activeVersion}: ${verdict}`);
  return done ? 0 : 1;
}

/**
 * The `reencrypt [--check]` command of a service: runs its job over every table
 * that holds envelopes, prints the reports and sets the process's exit code.
 */
export async function reencryptCommand(
  service: string,
  config: KeyRingSettings,
  argv: readonly string[],
  run: (options: ReencryptionOptions) => Promise<ReencryptionReport[]>,
): Promise<void> {
  const check = argv.includes('--check');
  process.exitCode = printReencryption(service, await run({ check }), keyRingOf(config), check);
}
