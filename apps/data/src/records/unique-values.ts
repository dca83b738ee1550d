import type { EntityManager } from 'typeorm';
import { ErrorCode, type PropertyDefinition } from '@strata/contracts';
import { isUniqueViolation } from '@strata/db';
import { StrataException } from '@strata/platform';
import { canonicalJson } from '../schema/value-check.js';

/** Fields whose values must be unique in the collection: `isUnique`, and one-to-one references. */
export function uniqueFields(properties: readonly PropertyDefinition[]): string[] {
  return properties
    .filter((p) => p.isUnique || (p.type === 'reference' && p.relationship === 'one-to-one'))
    .map((p) => p.name);
}

/**
 * Makes the unique index rows of a record match its data. The primary key of
 * data.unique_values (collection, field, value) is the guard: of two concurrent
 * writers of the same value, the second waits for the first and then fails, so
 * there is never a second winner. Values compare type-strictly (42 ≠ "42");
 * absent and null values are not indexed.
 */
export async function syncUniqueValues(
  tx: EntityManager,
  collectionId: string,
  recordId: string,
  fields: readonly string[],
  data: Record<string, unknown> | undefined,
): Promise<void> {
  await tx.query('DELETE FROM data.unique_values WHERE record_id = $1', [recordId]);
  if (!data) return;
  for (const field of fields) {
    const value = data[field];
    if (value === undefined || value === null) continue;
    try {
      await tx.query(
        'INSERT INTO data.unique_values (collection_id, field, value, record_id) VALUES ($1, $2, $3, $4)',
        [collectionId, field, canonicalJson(value), recordId],
      );
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      throw new StrataException(ErrorCode.DUPLICATE_KEY, `A record with this ${field} already exists`, [
        { field: `data.${field}`, message: 'must be unique in the collection' },
      ]);
    }
  }
}
