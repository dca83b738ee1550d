import { ErrorCode, type Action, type Collection } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { StrataException, type Grants } from '@strata/platform';
import type { CollectionsRepository } from '../collections/collections.repository.js';

/**
 * Permissions scoped to collections (docs/identity.md): a caller whose
 * policies do not reach a collection's records is answered as if the
 * collection did not exist, with the 404 and message a missing one gets, never
 * a 403 that would confirm it is there.
 */

/** The collection as the caller named it (by id or slug): its absence is told in those terms. */
export type NamedAs = { readonly id: string } | { readonly slug: string };

/** 404 `STRUCTURE_NOT_FOUND` unless the caller may do `action` on the collection's records. */
export function requireCollection(
  grants: Grants,
  action: Action,
  c: Collection,
  namedAs: NamedAs = { id: c.id },
): void {
  if (grants.canOnCollection(action, c.recordSlug)) return;
  throw StrataException.notFound(
    `Collection ${'id' in namedAs ? namedAs.id : `'${namedAs.slug}'`} not found`,
    ErrorCode.STRUCTURE_NOT_FOUND,
  );
}

/** 404 `RECORD_NOT_FOUND` unless the caller may do `action` on the records of the record's collection. */
export function requireRecordIn(grants: Grants, action: Action, c: Collection, recordId: string): void {
  if (grants.canOnCollection(action, c.recordSlug)) return;
  throw StrataException.notFound(`Record ${recordId} not found`, ErrorCode.RECORD_NOT_FOUND);
}

/** The collection lookup a query uses to find the collections it names. */
export type CollectionLookup = Pick<CollectionsRepository, 'find'>;

/**
 * `collections.find`, for a caller that may do `action` on the records of
 * what it finds: another collection is not found, exactly as a missing one is
 * (so a query naming it, as its resource or in a join, is answered as a query
 * naming a collection that does not exist).
 */
export function visibleCollections(collections: CollectionLookup, grants: Grants, action: Action): CollectionLookup {
  return {
    find: async (scope: WorkspaceScope, by, options) => {
      const c = await collections.find(scope, by, options);
      requireCollection(grants, action, c, by);
      return c;
    },
  };
}
