import type { EntityManager } from 'typeorm';
import { ErrorCode, type Collection } from '@strata/contracts';
import { StrataException } from '@strata/platform';
import { toCollection, type CollectionRow } from '../collections/collections.service.js';

/**
 * A live collection of the workspace, by id or by slug. With `lock`, the row is
 * held FOR SHARE until the transaction ends, so a schema change waits for the
 * records being written against the current schema.
 */
export async function findCollection(
  db: EntityManager,
  workspace: string,
  by: { id: string } | { slug: string },
  lock = false,
): Promise<Collection> {
  return (await findCollectionRevision(db, workspace, by, lock)).collection;
}

/** {@link findCollection}, with the row's `xmin`: every change to the collection row gives it a new one. */
export async function findCollectionRevision(
  db: EntityManager,
  workspace: string,
  by: { id: string } | { slug: string },
  lock = false,
): Promise<{ collection: Collection; revision: string }> {
  const [column, value] = 'id' in by ? ['id', by.id] : ['record_slug', by.slug];
  const rows = await db.query<(CollectionRow & { revision: string })[]>(
    `SELECT *, xmin::text AS revision FROM data.collections
      WHERE workspace_slug = $1 AND ${column} = $2 AND deleted_at IS NULL${lock ? ' FOR SHARE' : ''}`,
    [workspace, value],
  );
  if (!rows[0]) {
    throw StrataException.notFound(
      `Collection ${'id' in by ? by.id : `'${by.slug}'`} not found`,
      ErrorCode.STRUCTURE_NOT_FOUND,
    );
  }
  return { collection: toCollection(rows[0]), revision: rows[0].revision };
}
