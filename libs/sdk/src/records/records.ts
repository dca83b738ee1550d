import { Resource, segment, type CallOptions } from '../http/resource.js';
import type {
  BulkCreate,
  BulkCreateResult,
  BulkUpdate,
  BulkUpdateResult,
  ChangelogEntry,
  ChangelogQuery,
  DeleteResult,
  QueryDefinition,
  QueryResult,
  RecordCreate,
  RecordGetQuery,
  RecordList,
  RecordListQuery,
  RecordUpdateOptions,
  RecordUpsert,
  RecordVersion,
  RestoreResult,
  StrataRecord,
  UpsertResult,
} from './types.js';
import type { JsonObject } from '../http/resource.js';

/** Call options of a write that may name the version it expects. */
export type VersionedCallOptions = CallOptions & { readonly ifMatch?: number };

const ifMatch = (options: VersionedCallOptions | undefined) =>
  options?.ifMatch === undefined ? undefined : { 'if-match': `"${options.ifMatch}"` };

/** The cursor of a page that says more rows follow; a page without one (a joined query's) cannot be walked. */
function nextCursorOf(page: { nextCursor?: string | null }, walker: string): string {
  if (!page.nextCursor) {
    throw new Error(
      `${walker}: the answer has more rows but no cursor (a query with joins pages by offset only); page it with page.offset instead`,
    );
  }
  return page.nextCursor;
}

const list = (values: readonly string[] | undefined) => (values && values.length > 0 ? values.join(',') : undefined);

/** `{data_base}/records`: records of every collection. */
export class Records extends Resource {
  create(input: RecordCreate, options?: CallOptions): Promise<StrataRecord> {
    return this.call('POST', '/records', { body: input, signal: options?.signal });
  }

  get(id: string, query: RecordGetQuery = {}, options?: CallOptions): Promise<StrataRecord> {
    return this.read(`/records/${segment(id)}`, { ...query, expand: list(query.expand) }, options);
  }

  list(query: RecordListQuery = {}, options?: CallOptions): Promise<RecordList> {
    return this.read('/records', { ...query, expand: list(query.expand) }, options);
  }

  /**
   * Every record the list query matches, page after page by keyset cursor (`nextCursor`), so the
   * walk stays correct while records are written. Pages hold `query.limit` (default 100) records.
   */
  async *iterate(query: Omit<RecordListQuery, 'cursor' | 'offset'> = {}, options?: CallOptions) {
    let cursor: string | undefined;
    for (;;) {
      const page = await this.list({ limit: 100, ...query, ...(cursor === undefined ? {} : { cursor }) }, options);
      yield* page.results;
      if (!page.pagination.hasMore) return;
      cursor = nextCursorOf(page.pagination, 'records.iterate');
    }
  }

  /**
   * Every row of a canonical query, page after page by cursor (`meta.nextCursor`); the
   * definition's `page.limit` (default 100) sizes the pages. A query with joins pages by offset
   * only: walking one throws once a page says more rows follow, rather than stop short.
   */
  async *iterateQuery<Row = StrataRecord>(definition: QueryDefinition, options?: CallOptions): AsyncGenerator<Row> {
    if (definition.page && 'offset' in definition.page && definition.page.offset !== undefined) {
      throw new TypeError('records.iterateQuery walks from the first row: give no page.offset');
    }
    const limit = definition.page?.limit ?? 100;
    let cursor: string | undefined;
    for (;;) {
      const page = await this.query<Row>(
        { ...definition, page: cursor === undefined ? { limit } : { limit, cursor } },
        options,
      );
      yield* page.data;
      if (!page.meta.hasMore) return;
      cursor = nextCursorOf(page.meta, 'records.iterateQuery');
    }
  }

  /** The records of one collection, by its slug. */
  listBySlug(recordSlug: string, query: Omit<RecordListQuery, 'structureId'> = {}, options?: CallOptions) {
    return this.read<RecordList>(
      `/records/slug/${segment(recordSlug)}`,
      { ...query, expand: list(query.expand) },
      options,
    );
  }

  /**
   * PATCH: only the fields given change; a field set to null is unset. With `ifMatch`, only
   * while the record is at that version (409 `VERSION_CONFLICT` otherwise); such a write is
   * also safe to retry after a lost answer, and is.
   */
  update(
    id: string,
    data: JsonObject,
    extra: { metadata?: JsonObject; options?: RecordUpdateOptions } = {},
    options?: VersionedCallOptions,
  ): Promise<StrataRecord> {
    return this.call('PATCH', `/records/${segment(id)}`, {
      body: { data, ...extra },
      headers: ifMatch(options),
      signal: options?.signal,
    });
  }

  /** PUT: the record's data becomes `data`; fields not supplied are removed. `ifMatch` as for `update`. */
  replace(id: string, data: JsonObject, options?: VersionedCallOptions): Promise<StrataRecord> {
    return this.call('PUT', `/records/${segment(id)}`, {
      body: { data },
      headers: ifMatch(options),
      signal: options?.signal,
    });
  }

  /** Creates or updates the record matching `match` (201 created or 200 updated, told by `operation`). */
  upsert(
    recordSlug: string,
    input: RecordUpsert,
    options?: CallOptions & { idempotencyKey?: string },
  ): Promise<UpsertResult> {
    return this.call('POST', `/records/slug/${segment(recordSlug)}/upsert`, {
      body: input,
      idempotencyKey: options?.idempotencyKey,
      signal: options?.signal,
    });
  }

  /** Soft unless `permanent`. `ifMatch` as for `update`. */
  delete(id: string, query: { permanent?: boolean } = {}, options?: VersionedCallOptions): Promise<DeleteResult> {
    return this.call('DELETE', `/records/${segment(id)}`, {
      query,
      headers: ifMatch(options),
      signal: options?.signal,
    });
  }

  /** Many records in one request and one aggregate event (`records_bulk_created`). */
  bulkCreate(input: BulkCreate, options?: CallOptions): Promise<BulkCreateResult> {
    return this.call('POST', '/records/bulk', { body: input, signal: options?.signal });
  }

  /** Many records in one request, one `record_created` event per record. */
  batchCreate(input: BulkCreate, options?: CallOptions): Promise<BulkCreateResult> {
    return this.call('POST', '/records/batch', { body: input, signal: options?.signal });
  }

  bulkUpdate(input: BulkUpdate, options?: CallOptions): Promise<BulkUpdateResult> {
    return this.call('PATCH', '/records/bulk', { body: input, signal: options?.signal });
  }

  bulkDelete(input: { ids: readonly string[]; permanent?: boolean }, options?: CallOptions): Promise<unknown> {
    return this.call('DELETE', '/records/bulk', { body: input, signal: options?.signal });
  }

  history(id: string, options?: CallOptions): Promise<{ versions: RecordVersion[] }> {
    return this.read(`/records/${segment(id)}/history`, undefined, options);
  }

  restore(id: string, input: { version: number; reason?: string }, options?: CallOptions): Promise<RestoreResult> {
    return this.call('POST', `/records/${segment(id)}/restore`, { body: input, signal: options?.signal });
  }

  changelog(id: string, query: ChangelogQuery = {}, options?: CallOptions): Promise<{ entries: ChangelogEntry[] }> {
    return this.read(`/records/${segment(id)}/changelog`, { ...query }, options);
  }

  /** Runs a canonical query definition (`POST /records/query`). */
  query<Row = StrataRecord>(definition: QueryDefinition, options?: CallOptions): Promise<QueryResult<Row>> {
    return this.call('POST', '/records/query', { body: definition, signal: options?.signal });
  }
}
