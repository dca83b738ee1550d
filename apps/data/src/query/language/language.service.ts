import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { Collection, FieldError } from '@strata/contracts';
import { StrataException, type Grants } from '@strata/platform';
import { findCollection } from '../../records/collection-lookup.js';
import { RecordExpander } from '../../records/record-expander.js';
import { RecordPresenter } from '../../records/record-presenter.js';
import type { RecordRow } from '../../records/record.types.js';
import { compileAggregate } from '../compile-aggregate.js';
import { compileSelect, DEFAULT_SORT } from '../compile-select.js';
import type { TypedWhere } from '../compile-where.js';
import { project } from '../project.js';
import type { LanguageQueryRequest } from './language.request.js';
import { parseQuery, QuerySyntaxError } from './parse.js';
import { translate } from './translate.js';

export interface LanguageResult {
  data: unknown[];
  meta: { limit: number; offset?: number; hasMore: boolean };
}

/** `POST /query`: the string language, compiled like the canonical definition and run in the caller's workspace. */
@Injectable()
export class LanguageService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly presenter: RecordPresenter,
    private readonly expander: RecordExpander,
  ) {}

  /** `earlier`: the body's own problems (checkBody), answered together with the query's. */
  async run(
    workspace: string,
    grants: Grants,
    body: LanguageQueryRequest,
    earlier: readonly FieldError[] = [],
  ): Promise<LanguageResult> {
    if (typeof body.query !== 'string') throw StrataException.validation([...earlier]);
    let ast;
    try {
      ast = parseQuery(body.query);
    } catch (err) {
      if (!(err instanceof QuerySyntaxError)) throw err;
      throw StrataException.validation(
        [
          ...earlier,
          {
            field: `query@${err.position}`,
            message: `${err.message}${err.expected.length ? ` Expected: ${err.expected.join(', ')}.` : ''}`,
          },
        ],
        err.message,
      );
    }
    const c = await findCollection(this.db.manager, workspace, { slug: ast.resource });
    const collections = new Map<string, Collection>();
    for (const inc of ast.includes) {
      if (!collections.has(inc.resource))
        collections.set(inc.resource, await findCollection(this.db.manager, workspace, { slug: inc.resource }));
    }
    const problems: FieldError[] = [...earlier];
    const q = translate(ast, c, collections, body.parameters ?? {}, problems);
    if (problems.length) throw StrataException.validation(problems, 'The query does not fit its collection');
    const scope = { workspace, collectionId: c.id };
    const limit = q.limit;
    if (q.kind === 'aggregate') {
      const compiled = compileAggregate({ ...scope, ...q, limit: limit + 1 });
      const rows = await this.db.query<Record<string, unknown>[]>(compiled.sql, compiled.params);
      const names = [...q.groups.map((g) => g.name), ...q.aggregates.map((a) => a.alias)];
      const numeric = new Set(
        q.aggregates.filter((a) => (a.fn !== 'min' && a.fn !== 'max') || a.type === 'number').map((a) => a.alias),
      );
      const data = rows.slice(0, limit).map((row) =>
        Object.fromEntries(
          names.map((name, i) => {
            const value = row[compiled.columns[i]!];
            return [name, numeric.has(name) && typeof value === 'string' ? Number(value) : value];
          }),
        ),
      );
      return { data, meta: { limit, ...(q.offset ? { offset: q.offset } : {}), hasMore: rows.length > limit } };
    }
    const sort = q.sort.length ? q.sort : DEFAULT_SORT;
    const compiled = compileSelect({
      ...scope,
      ...(q.where ? { where: q.where } : {}),
      ...(q.text ? { text: q.text } : {}),
      sort,
      limit: limit + 1,
      ...(q.offset ? { offset: q.offset } : {}),
    });
    const rows = await this.db.query<RecordRow[]>(compiled.sql, compiled.params);
    const records = await Promise.all(rows.slice(0, limit).map((row) => this.presenter.record(c, row, grants)));
    if (q.includes.length) {
      const filters = new Map<string, TypedWhere>(q.includes.filter((i) => i.where).map((i) => [i.path[0]!, i.where!]));
      await this.expander.expand(
        c,
        records.map((r) => r.data),
        q.includes.map((i) => i.path),
        grants,
        filters,
      );
    }
    return {
      data: q.select ? records.map((r) => project(r, q.select!)) : records,
      meta: { limit, ...(q.offset ? { offset: q.offset } : {}), hasMore: rows.length > limit },
    };
  }
}
