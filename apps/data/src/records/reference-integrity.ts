import type { EntityManager } from 'typeorm';
import type { PropertyDefinition, ReferenceProperty } from '@strata/contracts';
import { at, show, type Issues } from '../schema/issues.js';

const referencesOf = (properties: readonly PropertyDefinition[]) =>
  properties.filter((p): p is ReferenceProperty => p.type === 'reference');

export const hasReferences = (properties: readonly PropertyDefinition[]): boolean =>
  properties.some((p) => p.type === 'reference');

/**
 * Checks that every reference in `data` names a live record of its target
 * collection, and locks those records (FOR SHARE) so that a concurrent delete
 * waits for this write and then sees the reference.
 */
export async function checkReferenceTargets(
  tx: EntityManager,
  workspace: string,
  properties: readonly PropertyDefinition[],
  data: Record<string, unknown>,
  issues: Issues,
): Promise<void> {
  for (const p of referencesOf(properties)) {
    const value = data[p.name];
    if (value === undefined || value === null) continue;
    const wanted = (Array.isArray(value) ? value : [value]).map(String);
    if (wanted.length === 0) continue;
    const key = p.targetField === 'id' ? 'r.id::text' : 'r.data ->> $4';
    const rows = await tx.query<{ key: string }[]>(
      `SELECT ${key} AS key FROM data.records r JOIN data.collections c ON c.id = r.collection_id
        WHERE c.workspace_slug = $1 AND c.record_slug = $2 AND c.deleted_at IS NULL AND r.deleted_at IS NULL
          AND ${key} = ANY($3::text[])
        FOR SHARE OF r`,
      p.targetField === 'id' ? [workspace, p.target, wanted] : [workspace, p.target, wanted, p.targetField],
    );
    const found = new Set(rows.map((r) => r.key));
    const missing = wanted.filter((w) => !found.has(w));
    if (missing.length)
      issues.add(
        at('data', p.name),
        `names no record of ${p.target}: ${show(missing.length === 1 ? missing[0] : missing)}`,
      );
  }
}

/** A reference of another collection that points at the collection being written to. */
export interface IncomingReference {
  readonly collectionId: string;
  readonly recordSlug: string;
  readonly properties: PropertyDefinition[];
  readonly enableVersioning: boolean;
  readonly property: ReferenceProperty;
}

/** Every reference property of the workspace's live collections that targets `recordSlug`. */
export async function incomingReferences(
  tx: EntityManager,
  workspace: string,
  recordSlug: string,
): Promise<IncomingReference[]> {
  const rows = await tx.query<
    { id: string; record_slug: string; properties: PropertyDefinition[]; enable_versioning: boolean }[]
  >(
    `SELECT id, record_slug, properties, enable_versioning FROM data.collections
      WHERE workspace_slug = $1 AND deleted_at IS NULL
        AND properties @> $2::jsonb`,
    [workspace, JSON.stringify([{ type: 'reference', target: recordSlug }])],
  );
  return rows.flatMap((c) =>
    referencesOf(c.properties)
      .filter((p) => p.target === recordSlug)
      .map((property) => ({
        collectionId: c.id,
        recordSlug: c.record_slug,
        properties: c.properties,
        enableVersioning: c.enable_versioning,
        property,
      })),
  );
}

/** Ids of the live records of `ref`'s collection whose reference field holds `key`, locked for update. */
export async function referencingRecordIds(tx: EntityManager, ref: IncomingReference, key: unknown): Promise<string[]> {
  const probe =
    ref.property.relationship === 'many-to-many' ? { [ref.property.name]: [key] } : { [ref.property.name]: key };
  const rows = await tx.query<{ id: string }[]>(
    `SELECT id FROM data.records WHERE collection_id = $1 AND deleted_at IS NULL AND data @> $2::jsonb
      ORDER BY created_at, id FOR UPDATE`,
    [ref.collectionId, JSON.stringify(probe)],
  );
  return rows.map((r) => r.id);
}
