import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { FieldError } from '@strata/contracts';
import { findCollection } from '../records/collection-lookup.js';
import { RecordExpander } from '../records/record-expander.js';
import { RecordPresenter } from '../records/record-presenter.js';
import type { RecordResponse, RecordRow } from '../records/record.types.js';
import { parseCanonical } from './canonical.js';
import { compileCount, compileSelect, DEFAULT_SORT } from './compile-select.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { CanonicalQueryRequest } from './dto/canonical.request.js';
import { checkComplexity } from './complexity.js';
import { DataConfig } from '../data.config.js';
import { createValidationPipe, StrataException, type Grants } from '@strata/platform';

const pipe = createValidationPipe();
import { project } from './project.js';
import { compileJoinSelect } from './compile-join.js';
import { resolveJoins, type JoinSettings, type ResolvedJoins } from './joins.js';
import type { CompilableQuery } from './compile-select.js';
import type { Collection } from '@strata/contracts';

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
    @InjectDataSource() private readonly db: DataSource,
    private readonly presenter: RecordPresenter,
    private readonly expander: RecordExpander,
    private readonly config: DataConfig,
  ) {}

  /** Runs a definition that arrived some other way than a validated body (a saved query after substitution). */
  async runDefinition(workspace: string, grants: Grants, definition: unknown): Promise<QueryResult> {
    const body = (await pipe.transform(definition, {
      type: 'body',
      metatype: CanonicalQueryRequest,
    })) as CanonicalQueryRequest;
    return this.run(workspace, grants, body);
  }

  async run(workspace: string, grants: Grants, body: CanonicalQueryRequest): Promise<QueryResult> {
    checkComplexity(body.where, this.config.DATA_QUERY_MAX_CONDITIONS);
    const c = await findCollection(this.db.manager, workspace, { slug: body.resource });
    const problems: FieldError[] = [];
    const parts = parseCanonical(c, body, problems);
    const joins = await resolveJoins(this.db.manager, workspace, c, body, this.joinSettings(), problems);
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
    const query = {
      workspace,
      collectionId: c.id,
      ...(parts.where ? { where: parts.where } : {}),
      ...(parts.text ? { text: parts.text } : {}),
      sort,
      limit,
      ...(page.offset ? { offset: page.offset } : {}),
      ...(page.cursor !== undefined ? { after: decodeCursor(page.cursor, sortSpec, sort.length) } : {}),
    };
    if (joins) return this.runJoined(c, grants, query, joins, parts.select, page.offset);
    const compiled = compileSelect({ ...query, limit: limit + 1 });
    const rows = await this.db.query<(RecordRow & Record<string, string>)[]>(compiled.sql, compiled.params);
    const pageRows = rows.slice(0, limit);
    const records = await Promise.all(pageRows.map((row) => this.presenter.record(c, row, grants)));
    if (parts.include.length) {
      await this.expander.expand(
        c,
        records.map((r) => r.data),
        parts.include,
        grants,
      );
    }
    let total: number | undefined;
    if (page.includeCount) {
      const count = compileCount(query);
      total = (await this.db.query<[{ n: number }]>(count.sql, count.params))[0].n;
    }
    const last = pageRows.at(-1);
    const hasMore = rows.length > limit;
    return {
      data: parts.select ? records.map((r) => project(r, parts.select!)) : records,
      meta: {
        limit,
        ...(page.offset !== undefined ? { offset: page.offset } : {}),
        ...(total !== undefined ? { total } : {}),
        hasMore,
        nextCursor:
          hasMore && last
            ? encodeCursor(
                sortSpec,
                compiled.keyColumns.map((k) => last[k]!),
                last.id,
              )
            : null,
      },
    };
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
    c: Collection,
    grants: Grants,
    query: Omit<CompilableQuery, 'after'> & { after?: unknown },
    joins: ResolvedJoins,
    select: string[] | undefined,
    offset: number | undefined,
  ): Promise<QueryResult> {
    const { after: _after, ...rest } = query;
    const compiled = compileJoinSelect({ ...rest, limit: query.limit + 1 }, joins.specs);
    const rows = await this.db.query<(RecordRow & Record<string, unknown>)[]>(compiled.sql, compiled.params);
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
