import { Injectable } from '@nestjs/common';
import { ErrorCode, type Collection, type FieldError } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { StrataException, type Grants } from '@strata/platform';
import { CollectionsRepository } from '../collections/collections.repository.js';
import { compileJoinSelect } from '../compiler/compile-join.js';
import { DEFAULT_SORT, type CompilableQuery } from '../compiler/compile-select.js';
import { decodeCursor } from '../compiler/cursor.js';
import { DataConfig } from '../data.config.js';
import { RecordPages } from '../records/record-pages.js';
import { RecordPresenter } from '../records/record-presenter.js';
import { RecordsRepository } from '../records/records.repository.js';
import type { RecordResponse, RecordRow } from '../records/record.types.js';
import { parseCanonical } from './canonical.js';
import { checkComplexity } from './complexity.js';
import { CanonicalQueryRequest } from './dto/canonical.request.js';
import { checkBody } from '../schema/checked-body.js';
import { resolveJoins, type JoinSettings, type ResolvedJoins } from './joins.js';
import { project } from './project.js';
import { visibleCollections, type CollectionLookup } from '../records/collection-access.js';

/** A primary row that an outer join did not find: every record column null. */
const NULL_RECORD: Record<string, null> = Object.fromEntries(
  [
    'id',
    'structureId',
    'recordSlug',
    'workspaceSlug',
    'data',
    'status',
    'version',
    'createdAt',
    'updatedAt',
    'createdBy',
    'updatedBy',
  ].map((k) => [k, null]),
);

export interface QueryResult {
  data: Partial<RecordResponse>[];
  meta: { limit: number; offset?: number; total?: number; hasMore: boolean; nextCursor: string | null };
}

/** `POST /records/query`: a canonical query definition, run within the caller's workspace. */
@Injectable()
export class QueryService {
  constructor(
    private readonly collections: CollectionsRepository,
    private readonly records: RecordsRepository,
    private readonly pages: RecordPages,
    private readonly presenter: RecordPresenter,
    private readonly config: DataConfig,
  ) {}

  /** Runs a definition that arrived some other way than a validated body (a saved query after substitution). */
  async runDefinition(scope: WorkspaceScope, grants: Grants, definition: unknown): Promise<QueryResult> {
    const checked = await checkBody(CanonicalQueryRequest, definition);
    return this.run(scope, grants, checked.body, checked.problems);
  }

  /** `earlier`: the body's own problems (checkBody), answered together with those found against the collection. */
  async run(
    scope: WorkspaceScope,
    grants: Grants,
    body: CanonicalQueryRequest,
    earlier: readonly FieldError[] = [],
  ): Promise<QueryResult> {
    checkComplexity(body.where, this.config.DATA_QUERY_MAX_CONDITIONS);
    if (typeof body.resource !== 'string') throw StrataException.validation([...earlier]);
    const c = await this.resourceOf(scope, grants, body.resource, earlier);
    const problems: FieldError[] = [...earlier];
    const parts = parseCanonical(c, body, problems);
    const joins = await resolveJoins(scope, this.readable(grants), c, body, this.joinSettings(), problems);
    const page = body.page ?? {};
    if (page.cursor !== undefined && page.offset)
      problems.push({ field: 'page.cursor', message: 'cannot be combined with page.offset' });
    if (joins && page.cursor !== undefined)
      problems.push({ field: 'page.cursor', message: 'is not available with joins: use offset' });
    if (joins && page.includeCount)
      problems.push({ field: 'page.includeCount', message: 'is not available with joins' });
    if (problems.length) throw StrataException.validation(problems, 'The query does not fit its collection');
    const sort = parts.sort.length ? parts.sort : DEFAULT_SORT;
    // The cursor belongs to the sort it was made with.
    const sortSpec = JSON.stringify(body.sort ?? []);
    const limit = page.limit ?? 20;
    const query: CompilableQuery = {
      scope,
      collectionId: c.id,
      ...(parts.where ? { where: parts.where } : {}),
      ...(parts.text ? { text: parts.text } : {}),
      sort,
      limit,
      ...(page.offset ? { offset: page.offset } : {}),
      ...(page.cursor !== undefined ? { after: decodeCursor(page.cursor, sortSpec, sort.length) } : {}),
    };
    if (joins) return this.runJoined(scope, c, grants, query, joins, parts.select, page.offset);
    const result = await this.pages.page(scope, {
      collection: c,
      query,
      sortSpec,
      includeCount: page.includeCount,
      expand: { paths: parts.include },
      grants,
    });
    return {
      data: parts.select ? result.records.map((r) => project(r, parts.select!)) : result.records,
      meta: {
        limit,
        ...(page.offset !== undefined ? { offset: page.offset } : {}),
        ...(result.total !== undefined ? { total: result.total } : {}),
        hasMore: result.hasMore,
        nextCursor: result.nextCursor,
      },
    };
  }

  /**
   * The collection a query names. When the body already has problems, an unknown
   * collection is one more of them (a 400 listing all), not a 404 on its own.
   */
  private async resourceOf(
    scope: WorkspaceScope,
    grants: Grants,
    slug: string,
    earlier: readonly FieldError[],
  ): Promise<Collection> {
    try {
      return await this.readable(grants).find(scope, { slug });
    } catch (err) {
      if (!earlier.length || !(err instanceof StrataException) || err.code !== ErrorCode.STRUCTURE_NOT_FOUND) throw err;
      throw StrataException.validation([
        ...earlier,
        { field: 'resource', message: `names no collection of this workspace: '${slug}'` },
      ]);
    }
  }

  /** The collections whose records the caller may list: the others are not found (docs/identity.md). */
  readable(grants: Grants): CollectionLookup {
    return visibleCollections(this.collections, grants, 'list');
  }

  joinSettings(): JoinSettings {
    return {
      maxJoins: this.config.DATA_QUERY_MAX_JOINS,
      outerJoinsEnabled: this.config.DATA_QUERY_OUTER_JOINS_ENABLED,
    };
  }

  /**
   * Rows of a joined query: the primary record (every column null when an outer
   * join found no primary row) with `_joined.<alias>` holding the joined record
   * `{id, data}`, or null when there was none.
   */
  private async runJoined(
    scope: WorkspaceScope,
    c: Collection,
    grants: Grants,
    query: CompilableQuery,
    joins: ResolvedJoins,
    select: string[] | undefined,
    offset: number | undefined,
  ): Promise<QueryResult> {
    const { after: _after, ...rest } = query;
    const compiled = compileJoinSelect({ ...rest, limit: query.limit + 1 }, joins.specs);
    const rows = await this.records.run<RecordRow & Record<string, unknown>>(scope, compiled);
    const data = await Promise.all(
      rows.slice(0, query.limit).map(async (row) => {
        const primary: Partial<RecordResponse> | Record<string, null> =
          row.id === null ? { ...NULL_RECORD } : await this.presenter.record(c, row, grants);
        const shown = select && row.id !== null ? project(primary as RecordResponse, select) : primary;
        const joined: Record<string, { id: string; data: Record<string, unknown> } | null> = {};
        for (const [i, spec] of joins.specs.entries()) {
          const id = row[`j${i}_id`] as string | null;
          const foreign = joins.collections.get(spec.alias)!;
          joined[spec.alias] =
            id === null
              ? null
              : {
                  id,
                  data: await this.presenter.data(foreign, id, row[`j${i}_data`] as Record<string, unknown>, grants),
                };
        }
        return { ...shown, _joined: joined };
      }),
    );
    return {
      data: data as Partial<RecordResponse>[],
      meta: {
        limit: query.limit,
        ...(offset !== undefined ? { offset } : {}),
        hasMore: rows.length > query.limit,
        nextCursor: null,
      },
    };
  }
}
