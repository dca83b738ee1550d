import { ITERATOR_PAGE_SIZE as SIZE, walkPages } from '../http/pages.js';
import { Resource, segment, type CallOptions, type JsonObject } from '../http/resource.js';
import type {
  BulkDeleteResult,
  ChangeCheck,
  Collection,
  CollectionInput,
  CollectionList,
  CollectionListQuery,
  DefinitionCheck,
  PropertyRemoval,
} from './types.js';

/** `{data_base}/structures`: collections and their schemas. */
export class Collections extends Resource {
  create(input: CollectionInput, options?: CallOptions): Promise<Collection> {
    return this.call('POST', '/structures', { body: input, signal: options?.signal });
  }

  get(id: string, options?: CallOptions): Promise<Collection> {
    return this.read(`/structures/${segment(id)}`, undefined, options);
  }

  getBySlug(recordSlug: string, options?: CallOptions): Promise<Collection> {
    return this.read(`/structures/slug/${segment(recordSlug)}`, undefined, options);
  }

  list(query: CollectionListQuery = {}, options?: CallOptions): Promise<CollectionList> {
    return this.read('/structures', { ...query }, options);
  }

  /** Every collection the query matches, page after page (by offset: see `walkPages`). */
  iterate(
    query: Omit<CollectionListQuery, 'limit' | 'offset'> = {},
    options?: CallOptions,
  ): AsyncGenerator<Collection> {
    return walkPages(SIZE, async (index) => {
      const page = await this.list({ ...query, limit: SIZE, offset: index * SIZE }, options);
      return { items: page.results, total: page.pagination.total };
    });
  }

  /** Replaces the collection's definition (PUT): properties left out are removed. */
  update(id: string, input: Partial<CollectionInput>, options?: CallOptions): Promise<Collection> {
    return this.call('PUT', `/structures/${segment(id)}`, { body: input, signal: options?.signal });
  }

  delete(id: string, options?: CallOptions): Promise<unknown> {
    return this.call('DELETE', `/structures/${segment(id)}`, { signal: options?.signal });
  }

  /** Brings back a soft-deleted collection with its records (409 when its slug was taken meanwhile). */
  restore(id: string, options?: CallOptions): Promise<Collection> {
    return this.call('POST', `/structures/${segment(id)}/restore`, { signal: options?.signal });
  }

  /** Checks record data against the collection as a create would, writing nothing. */
  validate(
    id: string,
    data: JsonObject,
    options?: CallOptions,
  ): Promise<{ valid: true } | { valid: false; errors: { field: string; message: string }[] }> {
    return this.call('POST', `/structures/${segment(id)}/validate`, { body: { data }, signal: options?.signal });
  }

  /** Checks a definition as a create would (every problem, a taken slug), saving nothing. */
  validateDefinition(input: CollectionInput, options?: CallOptions): Promise<DefinitionCheck> {
    return this.call('POST', '/structures/validate', { body: input, signal: options?.signal });
  }

  /**
   * Checks a proposed definition (a PUT's body) as the update would, then the collection's live
   * records against it (counts and a sample of the failing ones), saving nothing.
   */
  validateChange(id: string, input: Partial<CollectionInput>, options?: CallOptions): Promise<ChangeCheck> {
    return this.call('POST', `/structures/${segment(id)}/validate`, { body: input, signal: options?.signal });
  }

  /**
   * Creates collections in one transaction (all or none); one may reference another of the same
   * call in any order. Problems come as `structures[i].…`.
   */
  bulkCreate(structures: readonly CollectionInput[], options?: CallOptions): Promise<{ results: Collection[] }> {
    return this.call('POST', '/structures/bulk', { body: { structures }, signal: options?.signal });
  }

  /**
   * Soft-deletes collections by id (or `{ids, slugs}`), answering per item: one another
   * collection references stays unless that one goes in the same call.
   */
  bulkDelete(
    which: readonly string[] | { ids?: readonly string[]; slugs?: readonly string[] },
    options?: CallOptions,
  ): Promise<BulkDeleteResult> {
    const body = isIdList(which) ? { ids: which } : which;
    return this.call('DELETE', '/structures/bulk', { body, signal: options?.signal });
  }

  /**
   * Removes top-level properties by name: refused (409) while records hold values for them,
   * unless `force`, which removes the values too.
   */
  removeProperties(
    id: string,
    names: readonly string[],
    options?: CallOptions & { force?: boolean },
  ): Promise<PropertyRemoval> {
    const body = { names, ...(options?.force !== undefined ? { force: options.force } : {}) };
    return this.call('DELETE', `/structures/${segment(id)}/properties`, { body, signal: options?.signal });
  }
}

function isIdList(which: unknown): which is readonly string[] {
  return Array.isArray(which);
}
