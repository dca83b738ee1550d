import { Injectable } from '@nestjs/common';
import type { Collection } from '@strata/contracts';
import type { Tx, WorkspaceScope } from '@strata/db';
import { convertForWrite, type MigratedField } from './migration-plan.js';
import { MigrationsRepository } from './migrations.repository.js';

const MAX_ENTRIES = 1000;

/**
 * Writes made while a collection migrates start from the stored values converted to the
 * definition in force (the collection's, read in the write's transaction): a record the job
 * has not reached yet is then written as the job would have left it, never refused for
 * holding values of the definition before. A job's fields never change, so they are cached
 * by job id.
 */
@Injectable()
export class MigrationConversions {
  private readonly fields = new Map<string, readonly MigratedField[]>();

  constructor(private readonly repository: MigrationsRepository) {}

  /** `stored` as the definition in force reads it; itself when no migration runs. */
  async current(
    scope: WorkspaceScope,
    tx: Tx | undefined,
    c: Pick<Collection, 'properties' | 'metadata'>,
    stored: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const jobId = c.metadata.migrationInProgress ? c.metadata.migrationJobId : undefined;
    if (jobId === undefined) return stored;
    let fields = this.fields.get(jobId);
    if (!fields) {
      fields = (await this.repository.fieldsOf(scope, jobId, tx)) ?? [];
      if (this.fields.size >= MAX_ENTRIES) this.fields.delete(this.fields.keys().next().value!);
      this.fields.set(jobId, fields);
    }
    return fields.length ? convertForWrite(fields, c.properties, stored) : stored;
  }
}
