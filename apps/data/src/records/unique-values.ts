import { ErrorCode, type PropertyDefinition } from '@strata/contracts';
import { isUniqueViolation } from '@strata/db';
import { StrataException } from '@strata/platform';
import { own } from '../schema/issues.js';
import { canonicalJson } from '../schema/value-check.js';
import type { SideWrites } from './side-writes.js';

/** Fields whose values must be unique in the collection: `isUnique`, and one-to-one references. */
export function uniqueFields(properties: readonly PropertyDefinition[]): string[] {
  return properties
    .filter((p) => p.isUnique || (p.type === 'reference' && p.relationship === 'one-to-one'))
    .map((p) => p.name);
}

/**
 * Queues the unique-index rows of a record's data. The primary key of
 * data.unique_values (collection, field, value) is the guard: of two concurrent
 * writers of the same value, the second waits for the first and then fails, so
 * there is never a second winner. Values compare type-strictly (42 ≠ "42");
 * absent and null values are not indexed. Rows of an existing record must be
 * cleared first (RecordsRepository.clearUniqueValues).
 */
export function addUniqueValues(
  side: SideWrites,
  collectionId: string,
  recordId: string,
  fields: readonly string[],
  data: Record<string, unknown>,
): void {
  for (const field of fields) {
    const value = own(data, field);
    if (value === undefined || value === null) continue;
    side.add('data.unique_values', {
      collection_id: collectionId,
      field,
      value: canonicalJson(value),
      record_id: recordId,
    });
  }
}

/** Turns a violation of the unique-values key into 409 DUPLICATE_KEY naming the field; rethrows anything else. */
export function duplicateKeyError(err: unknown): never {
  if (isUniqueViolation(err, 'unique_values_pkey')) {
    const e = err as { detail?: string; driverError?: { detail?: string } };
    const detail = e.driverError?.detail ?? e.detail ?? '';
    const field = /\(collection_id, field, value\)=\([^,]+, ([A-Za-z0-9_]+), /.exec(detail)?.[1] ?? 'value';
    throw new StrataException(ErrorCode.DUPLICATE_KEY, `A record with this ${field} already exists`, [
      { field: `data.${field}`, message: 'must be unique in the collection' },
    ]);
  }
  throw err;
}
