import type { PropertyDefinition, ReferenceProperty } from '@strata/contracts';
import type { Tx, WorkspaceScope } from '@strata/db';
import { at, own, show, type Issues } from '../schema/issues.js';
import type { RecordsRepository } from './records.repository.js';

const referencesOf = (properties: readonly PropertyDefinition[]) =>
  properties.filter((p): p is ReferenceProperty => p.type === 'reference');

export const hasReferences = (properties: readonly PropertyDefinition[]): boolean =>
  properties.some((p) => p.type === 'reference');

/**
 * Checks that every reference in `data` names a live record of its target
 * collection in the same workspace, and locks those records (FOR SHARE) so
 * that a concurrent delete waits for this write and then sees the reference.
 */
export async function checkReferenceTargets(
  records: RecordsRepository,
  scope: WorkspaceScope,
  tx: Tx | undefined,
  properties: readonly PropertyDefinition[],
  data: Record<string, unknown>,
  issues: Issues,
): Promise<void> {
  for (const p of referencesOf(properties)) {
    const value = own(data, p.name);
    if (value === undefined || value === null) continue;
    const wanted = (Array.isArray(value) ? value : [value]).map(String);
    if (wanted.length === 0) continue;
    const found = await records.existingKeys(scope, tx, p.target, p.targetField, wanted);
    const missing = wanted.filter((w) => !found.has(w));
    if (missing.length)
      issues.add(
        at('data', p.name),
        `names no record of ${p.target}: ${show(missing.length === 1 ? missing[0] : missing)}`,
      );
  }
}
