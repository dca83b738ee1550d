import { Injectable } from '@nestjs/common';
import type { PropertyDefinition, ReferenceProperty } from '@strata/contracts';
import type { Tx } from '@strata/db';
import { own, show } from '../../schema/issues.js';
import { canonicalJson } from '../../schema/value-check.js';
import { migrateData, putBack, type FieldFailure, type MigratedField } from './migration-plan.js';
import {
  MigrationsRepository,
  type LockedRecord,
  type MigrationCounts,
  type MigrationRow,
  type RecordOutcome,
} from './migrations.repository.js';

/** One record's work in a batch. */
interface Work {
  readonly row: LockedRecord;
  /** The data the conversion started from (a cancel first puts back the values the job replaced). */
  readonly start: Record<string, unknown>;
  readonly data: Record<string, unknown>;
  readonly before: Record<string, [] | [unknown]>;
  readonly failures: FieldFailure[];
}

/**
 * One batch of a migration, on records the batch holds locked: converts them to the
 * definition in force (or, for a cancel, puts back the values the job replaced and converts the
 * rest back), checks references and unique values, writes what changed and says what happened
 * to each. Runs inside the batch's transaction: a crash rolls it back whole.
 */
@Injectable()
export class MigrationBatch {
  constructor(private readonly repository: MigrationsRepository) {}

  /**
   * The next batch of the scan, after the job's cursor: the records no client holds are
   * converted (and their outcomes saved), the others left pending. Undefined when the scan is
   * over. The caller saves the cursor and the counts with {@link MigrationsRepository.advance}.
   */
  async scan(
    tx: Tx,
    job: MigrationRow,
    target: readonly PropertyDefinition[],
    size: number,
  ): Promise<{ cursor: string; counts: Partial<MigrationCounts>; skipped: number } | undefined> {
    const ids = await this.repository.nextIds(tx, job, size);
    if (ids.length === 0) return undefined;
    const locked = await this.repository.lockRecords(tx, job, ids);
    const held = new Set(locked.map((r) => r.id));
    const skipped = ids.filter((i) => !held.has(i));
    await this.repository.markPending(tx, job.id, skipped);
    const counts = await this.convert(tx, job, target, locked);
    return { cursor: ids[ids.length - 1]!, counts, skipped: skipped.length };
  }

  /** Converts records the caller holds and saves their outcomes; returns the counts. */
  async convert(
    tx: Tx,
    job: MigrationRow,
    target: readonly PropertyDefinition[],
    locked: readonly LockedRecord[],
  ): Promise<Partial<MigrationCounts>> {
    const { counts, outcomes } = await this.apply(tx, job, target, locked);
    const processed = locked.map((r) => r.id);
    if (job.status === 'cancelling') await this.repository.saveRevertOutcomes(tx, job.id, processed, outcomes);
    else await this.repository.saveOutcomes(tx, job.id, processed, outcomes);
    return counts;
  }

  private async apply(
    tx: Tx,
    job: MigrationRow,
    target: readonly PropertyDefinition[],
    rows: readonly LockedRecord[],
  ): Promise<{ counts: Partial<MigrationCounts>; outcomes: RecordOutcome[] }> {
    const reverting = job.status === 'cancelling';
    const befores = reverting
      ? await this.repository.befores(
          tx,
          job.id,
          rows.map((r) => r.id),
        )
      : new Map<string, Record<string, [] | [unknown]>>();
    const work: Work[] = rows.map((row) => {
      const start = reverting ? putBack(job.fields, job.to_properties, row.data, befores.get(row.id)) : row.data;
      const migrated = migrateData(job.fields, target, start);
      return { row, start, data: migrated.data, before: { ...migrated.before }, failures: [...migrated.failures] };
    });
    const source = reverting ? job.to_properties : job.from_properties;
    for (const field of job.fields) {
      const property = target.find((p) => p.name === field.name);
      if (property?.type === 'reference') await this.checkTargets(tx, job, property, work);
      await this.indexUnique(tx, job, field, property, source, work);
    }
    const changed = work.filter((w) => canonicalJson(w.data) !== canonicalJson(w.row.data));
    await this.repository.writeData(
      tx,
      job,
      changed.map((w) => ({ id: w.row.id, data: w.data })),
    );
    const changedIds = new Set(changed.map((w) => w.row.id));
    const failed = work.filter((w) => w.failures.length > 0).length;
    const rewritten = work.filter((w) => w.failures.length === 0 && changedIds.has(w.row.id)).length;
    const counts: Partial<MigrationCounts> = reverting
      ? { revert_processed: work.length, reverted: rewritten, revert_failed: failed }
      : { processed: work.length, converted: rewritten, already_valid: work.length - rewritten - failed, failed };
    return {
      counts,
      outcomes: work.map((w) => ({
        recordId: w.row.id,
        before: w.before,
        failures: w.failures.length ? w.failures : undefined,
      })),
    };
  }

  /** Reference values must name live records of the target (not locked: a delete of one finds the reference). */
  private async checkTargets(tx: Tx, job: MigrationRow, property: ReferenceProperty, work: Work[]): Promise<void> {
    const live = work.filter((w) => !w.row.deleted && !failedOn(w, property.name));
    const keysOf = (w: Work): string[] => {
      const value = own(w.data, property.name);
      if (value === undefined || value === null) return [];
      return (Array.isArray(value) ? value : [value]).map(String);
    };
    const wanted = [...new Set(live.flatMap(keysOf))];
    const found = await this.repository.existingKeys(
      job.workspace_slug,
      tx,
      property.target,
      property.targetField,
      wanted,
    );
    for (const w of live) {
      const missing = keysOf(w).filter((k) => !found.has(k));
      if (missing.length) {
        fail(
          w,
          property.name,
          `names no record of ${property.target}: ${show(missing.length === 1 ? missing[0] : missing)}`,
        );
      }
    }
  }

  /**
   * Rebuilds the unique-value rows of a field whose uniqueness the definitions involve; a value
   * another record holds fails the record (its field keeps its old value and old row).
   */
  private async indexUnique(
    tx: Tx,
    job: MigrationRow,
    field: MigratedField,
    property: PropertyDefinition | undefined,
    source: readonly PropertyDefinition[],
    work: Work[],
  ): Promise<void> {
    const unique = isUnique(property);
    const wasUnique = isUnique(source.find((p) => p.name === field.name));
    if (!unique && !wasUnique) return;
    const values = new Map<string, string>();
    if (unique) {
      for (const w of work) {
        const value = own(w.data, field.name);
        if (!w.row.deleted && !failedOn(w, field.name) && value !== undefined && value !== null) {
          values.set(w.row.id, canonicalJson(value));
        }
      }
    }
    const taken = await this.repository.replaceUniqueValues(
      tx,
      job,
      field.name,
      work.map((w) => w.row.id),
      values,
    );
    const restore = new Map<string, string>();
    for (const w of work) {
      if (!taken.has(w.row.id)) continue;
      fail(w, field.name, 'holds a value another record holds already (the property is unique)');
      const old = own(w.row.data, field.name);
      if (wasUnique && old !== undefined && old !== null) restore.set(w.row.id, canonicalJson(old));
    }
    await this.repository.restoreUniqueValues(tx, job, field.name, restore);
  }
}

/** Whether a property's values are unique in its collection (records/unique-values.ts `uniqueFields` says the same). */
function isUnique(p: PropertyDefinition | undefined): boolean {
  return p !== undefined && (p.isUnique === true || (p.type === 'reference' && p.relationship === 'one-to-one'));
}

function failedOn(w: Work, field: string): boolean {
  return w.failures.some((f) => f.field === field);
}

/** Lists a field of a record as failed: it keeps the value it started from. */
function fail(w: Work, field: string, reason: string): void {
  w.failures.push({ field, reason });
  const value = own(w.start, field);
  if (value === undefined) delete w.data[field];
  else w.data[field] = value;
  delete w.before[field];
}
