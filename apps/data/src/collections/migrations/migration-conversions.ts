import { Injectable } from '@nestjs/common';
import type { Collection } from '@strata/contracts';
import type { Tx, WorkspaceScope } from '@strata/db';
import { isPlainObject } from '../../schema/issues.js';
import { convertForWrite, type MigratedField } from './migration-plan.js';
import { MigrationsRepository } from './migrations.repository.js';

const MAX_ENTRIES = 1000;

/**
 * Writes made while a collection migrates start from the stored values converted to the
 * definition in force (the collection's, read in the write's transaction): a record the job
 * has not reached yet is then written as the job would have left it, never refused for
 * holding values of the definition before. The values a write sends for the migrated fields
 * are converted the same way, so a client still writing the type of before is not refused
 * while the migration runs (its value is stored converted, then validated as any). A job's
 * fields never change, so they are cached by job id.
 */
@Injectable()
export class MigrationConversions {
  private readonly fields = new Map<string, readonly MigratedField[]>();

  constructor(private readonly repository: MigrationsRepository) {}

  /**
   * A write's stored data (`previous`) and sent data (`input`) as the definition in force reads
   * them; themselves when no migration runs. `input` that is not an object is left to validation.
   */
  async current<T extends Record<string, unknown> | undefined>(
    scope: WorkspaceScope,
    tx: Tx | undefined,
    c: Pick<Collection, 'properties' | 'metadata'>,
    previous: T,
    input: unknown,
  ): Promise<{ previous: T; input: unknown }> {
    const jobId = c.metadata.migrationInProgress ? c.metadata.migrationJobId : undefined;
    if (jobId === undefined) return { previous, input };
    let fields = this.fields.get(jobId);
    if (!fields) {
      fields = (await this.repository.fieldsOf(scope, jobId, tx)) ?? [];
      if (this.fields.size >= MAX_ENTRIES) this.fields.delete(this.fields.keys().next().value!);
      this.fields.set(jobId, fields);
    }
    if (fields.length === 0) return { previous, input };
    return {
      previous: (previous && convertForWrite(fields, c.properties, previous)) as T,
      input: isPlainObject(input) ? convertForWrite(fields, c.properties, input) : input,
    };
  }
}
