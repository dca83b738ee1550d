import { Injectable } from '@nestjs/common';
import type { Collection } from '@strata/contracts';
import type { Tx, WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import { MigrationConversions } from '../collections/migrations/migration-conversions.js';
import { Issues } from '../schema/issues.js';
import { nonStringSecrets, secretFields } from '../secrets/secret-paths.js';
import { computeFields, prepareRecordData, type WriteMode } from './record-data.js';
import { normalizeDatetimes } from './normalize.js';
import { checkReferenceTargets } from './reference-integrity.js';
import { RecordsRepository } from './records.repository.js';

/** Checks the data of record writes against their collection. */
@Injectable()
export class RecordValidator {
  constructor(
    private readonly records: RecordsRepository,
    private readonly migrations: MigrationConversions,
  ) {}

  /**
   * Prepares, checks and computes the data of one write; every problem in one 400.
   * With `validate: false` (skipValidation) the schema checks are skipped, but
   * computed fields, reference targets, the rules of the write mode and the type of
   * secret fields (strings, which are sealed) still apply. While the collection migrates, the
   * stored data (`previous`) and the values sent are first converted to the definition in force
   * (docs/data.md, "Migrations").
   */
  async forWrite(
    scope: WorkspaceScope,
    tx: Tx | undefined,
    c: Collection,
    mode: WriteMode,
    input: unknown,
    previous: Record<string, unknown> | undefined,
    validate = true,
  ): Promise<Record<string, unknown>> {
    const current = await this.migrations.current(scope, tx, c, previous, input);
    const prepared = prepareRecordData(c, mode, current.input, current.previous);
    const issues = validate ? prepared.issues : new Issues();
    if (!validate) {
      for (const path of nonStringSecrets(secretFields(c.properties), prepared.data)) {
        issues.add(`data.${path}`, 'is a secret field: must be a string or null');
      }
    }
    if (!issues.count) await computeFields(c.properties, prepared.data, 'persisted', issues);
    if (!issues.count) await checkReferenceTargets(this.records, scope, tx, c.properties, prepared.data, issues);
    if (issues.count) throw StrataException.validation([...issues.list], 'The record does not match its collection');
    normalizeDatetimes(c.properties, prepared.data);
    return prepared.data;
  }
}
