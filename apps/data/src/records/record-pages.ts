import { Injectable } from '@nestjs/common';
import type { Collection } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import type { Grants } from '@strata/platform';
import { compileCount, compileSelect, type CompilableQuery } from '../compiler/compile-select.js';
import type { TypedWhere } from '../compiler/compile-where.js';
import { encodeCursor } from '../compiler/cursor.js';
import { RecordExpander } from './record-expander.js';
import { RecordPresenter } from './record-presenter.js';
import { RecordsRepository } from './records.repository.js';
import type { RecordResponse, RecordRow } from './record.types.js';

export interface PageRequest {
  readonly collection: Collection;
  /** The checked query; its `limit` is the page size. */
  readonly query: CompilableQuery;
  /** The sort as the caller wrote it: a cursor belongs to the sort it was made with. */
  readonly sortSpec: string;
  readonly includeCount?: boolean | undefined;
  /** Reference paths to expand, and conditions that keep only some of the top-level ones. */
  readonly expand?: { readonly paths: string[][]; readonly filters?: ReadonlyMap<string, TypedWhere> } | undefined;
  readonly grants: Grants;
}

export interface RecordPage {
  readonly records: RecordResponse[];
  readonly hasMore: boolean;
  /** The number of matching records, when asked for. */
  readonly total: number | undefined;
  /** Where the next page starts, when there is one. */
  readonly nextCursor: string | null;
}

/**
 * One page of records, the same way for every read path (the records list,
 * the canonical query, the string language, saved queries): compile within the
 * scope, fetch one row more than the page to know whether another follows,
 * present each record as the caller may see it, expand references, count when
 * asked, and make the cursor of the next page from the last row's sort keys.
 */
@Injectable()
export class RecordPages {
  constructor(
    private readonly records: RecordsRepository,
    private readonly presenter: RecordPresenter,
    private readonly expander: RecordExpander,
  ) {}

  async page(scope: WorkspaceScope, request: PageRequest): Promise<RecordPage> {
    const { collection: c, query, grants } = request;
    const compiled = compileSelect({ ...query, limit: query.limit + 1 });
    const rows = await this.records.run<RecordRow & Record<string, string>>(scope, compiled);
    const pageRows = rows.slice(0, query.limit);
    const records = await Promise.all(pageRows.map((row) => this.presenter.record(c, row, grants)));
    const expand = request.expand;
    if (expand && expand.paths.length) {
      await this.expander.expand(
        scope,
        c,
        records.map((r) => r.data),
        expand.paths,
        grants,
        expand.filters,
      );
    }
    let total: number | undefined;
    if (request.includeCount) {
      total = (await this.records.run<{ n: number }>(scope, compileCount(query)))[0]!.n;
    }
    const hasMore = rows.length > query.limit;
    const last = pageRows.at(-1);
    const nextCursor =
      hasMore && last
        ? encodeCursor(
            request.sortSpec,
            compiled.keyColumns.map((k) => last[k]!),
            last.id,
          )
        : null;
    return { records, hasMore, total, nextCursor };
  }
}
