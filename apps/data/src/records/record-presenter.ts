import { Injectable } from '@nestjs/common';
import type { Collection } from '@strata/contracts';
import type { Grants } from '@strata/platform';
import { Issues } from '../schema/issues.js';
import { computeFields } from './record-data.js';
import { RecordSecrets } from './record-secrets.js';
import { toResponse, type RecordResponse, type RecordRow } from './record.types.js';

/** Stored records as a caller sees them: virtual fields computed, secrets revealed only with secrets:reveal. */
@Injectable()
export class RecordPresenter {
  constructor(private readonly secrets: RecordSecrets) {}

  async record(c: Collection, row: RecordRow, grants: Grants): Promise<RecordResponse> {
    return toResponse(row, await this.data(c, row.data, grants));
  }

  async data(c: Collection, stored: Record<string, unknown>, grants: Grants): Promise<Record<string, unknown>> {
    const plain = this.secrets.open(c.id, c.properties, stored);
    await computeFields(c.properties, plain, 'virtual', new Issues());
    return grants.can('secrets', 'reveal') ? plain : this.secrets.mask(c.properties, plain);
  }
}
