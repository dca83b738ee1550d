import { Injectable } from '@nestjs/common';
import type { Collection } from '@strata/contracts';
import type { Tx, WorkspaceScope } from '@strata/db';
import { Clock } from '@strata/platform';
import { DataConfig } from '../../data.config.js';
import { isPlainObject } from '../../schema/issues.js';
import { canonicalJson } from '../../schema/value-check.js';
import { convertForWrite, withoutIds, type MigratedField } from './migration-plan.js';
import { MigrationsRepository } from './migrations.repository.js';

const MAX_ENTRIES = 1000;

/** What writes need of a job: its fields, and, once it completed, when and to which definition. */
interface JobConversion {
  readonly fields: readonly MigratedField[];
  /** Whether the job had ended when it was read (an ended job never changes again). */
  readonly ended: boolean;
  /** Set when the job completed: when, and the definition it converted to (canonical JSON). */
  readonly completed?: { readonly at: number; readonly to: string };
}

/**
 * Writes made while a collection migrates start from the stored values converted to the
 * definition in force (the collection's, read in the write's transaction): a record the job
 * has not reached yet is then written as the job would have left it, never refused for
 * holding values of the definition before. The values a write sends for the migrated fields
 * are converted the same way, so a client still writing the type of before is not refused
 * while the migration runs (its value is stored converted, then validated as any). The same
 * goes on for `DATA_MIGRATION_WRITE_GRACE_MS` after the job completed, by the service's clock,
 * while the collection's properties are still the ones the job converted to: a fleet of clients
 * is not redeployed the moment a job ends. A job's fields never change, so they are cached by
 * job id; so is a completed job.
 */
@Injectable()
export class MigrationConversions {
  private readonly jobs = new Map<string, JobConversion>();

  constructor(
    private readonly repository: MigrationsRepository,
    private readonly config: DataConfig,
    private readonly clock: Clock,
  ) {}

  /**
   * A write's stored data (`previous`) and sent data (`input`) as the definition in force reads
   * them; themselves when no migration runs (or just completed). `input` that is not an object
   * is left to validation.
   */
  async current<T extends Record<string, unknown> | undefined>(
    scope: WorkspaceScope,
    tx: Tx | undefined,
    c: Pick<Collection, 'properties' | 'metadata'>,
    previous: T,
    input: unknown,
  ): Promise<{ previous: T; input: unknown }> {
    const fields = await this.fieldsInForce(scope, tx, c);
    if (fields.length === 0) return { previous, input };
    return {
      previous: (previous && convertForWrite(fields, c.properties, previous)) as T,
      input: isPlainObject(input) ? convertForWrite(fields, c.properties, input) : input,
    };
  }

  /** The fields whose values writes convert: the running job's, or the last job's within its grace window. */
  private async fieldsInForce(
    scope: WorkspaceScope,
    tx: Tx | undefined,
    c: Pick<Collection, 'properties' | 'metadata'>,
  ): Promise<readonly MigratedField[]> {
    const { metadata } = c;
    if (metadata.migrationInProgress) {
      const id = metadata.migrationJobId;
      return id === undefined ? [] : (this.jobs.get(id) ?? (await this.read(scope, tx, id))).fields;
    }
    const grace = this.config.DATA_MIGRATION_WRITE_GRACE_MS;
    if (grace === 0 || metadata.lastMigrationId === undefined) return [];
    const cached = this.jobs.get(metadata.lastMigrationId);
    // A job cached while it ran is read again once it has ended.
    const job = cached?.ended ? cached : await this.read(scope, tx, metadata.lastMigrationId);
    if (!job.completed || this.clock.now().getTime() - job.completed.at >= grace) return [];
    // A later change of the properties ends the window: its definition is not the one the job converted to.
    // (The same properties sent again are no change: ids are generated for those sent without one.)
    return job.completed.to === canonicalJson(withoutIds(c.properties)) ? job.fields : [];
  }

  private async read(scope: WorkspaceScope, tx: Tx | undefined, id: string): Promise<JobConversion> {
    const row = await this.repository.conversionOf(scope, id, tx);
    const entry: JobConversion = {
      fields: row?.fields ?? [],
      ended: !row || row.finished_at !== null,
      ...(row?.status === 'completed' && row.finished_at
        ? { completed: { at: new Date(row.finished_at).getTime(), to: canonicalJson(withoutIds(row.to_properties)) } }
        : {}),
    };
    this.jobs.delete(id);
    if (this.jobs.size >= MAX_ENTRIES) this.jobs.delete(this.jobs.keys().next().value!);
    this.jobs.set(id, entry);
    return entry;
  }
}
