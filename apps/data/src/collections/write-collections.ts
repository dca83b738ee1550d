import { Injectable } from '@nestjs/common';
import { ErrorCode, type Collection } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import type { Bind } from '../compiler/params.js';
import { CollectionsRepository } from './collections.repository.js';

/** The collection a write was validated against, as a row version the write can insist on. */
export interface CollectionGuard {
  readonly id: string;
  readonly scope: WorkspaceScope;
  /** The collection row's `xmin`: every change to the row (schema, status, delete) gives it a new one. */
  readonly revision: string;
}

/** Thrown by a guarded write that found the collection changed since it was read. */
export class CollectionChanged extends Error {
  constructor(id: string) {
    super(`collection ${id} changed during the write`);
  }
}

/**
 * The guard as the source rows of a write: one row while the collection is
 * live and unchanged, locked FOR SHARE so that a schema change waits for the
 * write (as reading the collection FOR SHARE in a transaction did), none once
 * it changed. A schema change that commits while the write waits gives the row
 * a new `xmin`, and the re-checked condition no longer holds.
 */
export function guardSql(guard: CollectionGuard, bind: Bind): string {
  return `SELECT id FROM data.collections WHERE id = ${bind(guard.id)} AND workspace_slug = ${bind(guard.scope.workspace)}
     AND deleted_at IS NULL AND xmin::text = ${bind(guard.revision)} FOR SHARE`;
}

interface Entry {
  readonly collection: Collection;
  readonly revision: string;
}

const MAX_ENTRIES = 1000;
const MAX_ATTEMPTS = 3;

/**
 * Collections for record writes, read once per replica and then trusted only
 * as far as the write itself confirms: the write carries the revision it was
 * validated against ({@link guardSql}) and, when the collection moved on,
 * the whole write runs again against the new definition. A write therefore
 * costs no collection read and no transaction of its own, yet never stores a
 * record validated against an outdated schema. An error answer computed from a
 * cached definition is re-checked the same way before it is given.
 */
@Injectable()
export class WriteCollections {
  private readonly cache = new Map<string, Entry>();

  constructor(private readonly collections: CollectionsRepository) {}

  async write<T>(
    scope: WorkspaceScope,
    id: string,
    work: (c: Collection, guard: CollectionGuard) => Promise<T>,
  ): Promise<T> {
    const key = `${scope.workspace}\u0000${id}`;
    for (let attempt = 1; ; attempt++) {
      const cached = this.cache.get(key);
      const entry = cached ?? (await this.read(key, scope, id));
      try {
        return await work(entry.collection, { id, scope, revision: entry.revision });
      } catch (err) {
        const stale =
          err instanceof CollectionChanged ||
          (cached !== undefined && (await this.revisionOf(scope, id, entry.revision)) !== entry.revision);
        if (!stale) throw err;
        this.cache.delete(key);
        if (attempt === MAX_ATTEMPTS) {
          throw StrataException.conflict(`Collection ${id} is changing too often to write to it; retry`);
        }
      }
    }
  }

  private async read(key: string, scope: WorkspaceScope, id: string): Promise<Entry> {
    const entry = await this.collections.findRevision(scope, { id });
    if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, entry);
    return entry;
  }

  /** The collection's current revision, or undefined when it is gone; the cached one when it cannot be read. */
  private async revisionOf(scope: WorkspaceScope, id: string, cached: string): Promise<string | undefined> {
    try {
      return (await this.collections.findRevision(scope, { id })).revision;
    } catch (err) {
      if (err instanceof StrataException && err.code === ErrorCode.STRUCTURE_NOT_FOUND) return undefined;
      // Cannot tell (database unreachable, say): the original error stands.
      return cached;
    }
  }
}
