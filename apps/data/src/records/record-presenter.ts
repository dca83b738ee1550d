import { Injectable } from '@nestjs/common';
import type { Collection } from '@strata/contracts';
import type { Grants } from '@strata/platform';
import { Issues } from '../schema/issues.js';
import { computeFields } from './record-data.js';
import { RecordSecrets } from '../secrets/record-secrets.js';
import type { Changes } from '../secrets/secret-paths.js';
import { toResponse, type RecordResponse, type RecordRow } from './record.types.js';

/**
 * Stored records as a caller sees them: virtual fields computed, secrets revealed
 * only with secrets:reveal (masked otherwise, and never decrypted then).
 */
@Injectable()
export class RecordPresenter {
  constructor(private readonly secrets: RecordSecrets) {}

  async record(c: Collection, row: RecordRow, grants: Grants): Promise<RecordResponse> {
    return toResponse(row, await this.data(c, row.id, row.data, grants));
  }

  /** The stored data of record `recordId` (its current data, or one of its versions). */
  async data(
    c: Collection,
    recordId: string,
    stored: Record<string, unknown>,
    grants: Grants,
  ): Promise<Record<string, unknown>> {
    const presented = this.secrets.present(c, recordId, stored, grants.can('secrets', 'reveal'));
    // A fresh object whatever happened: virtual fields are computed into it, never into the row.
    const shown = presented === stored ? { ...stored } : presented;
    await computeFields(c.properties, shown, 'virtual', new Issues());
    return shown;
  }

  /** Changes of a version or changelog entry: stored masked; masked again by the current schema. */
  changes(c: Pick<Collection, 'properties'>, changes: Changes): Changes {
    return this.secrets.maskChanges(c.properties, changes);
  }
}
