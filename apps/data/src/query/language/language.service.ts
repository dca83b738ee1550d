import { Injectable } from '@nestjs/common';
import type { Collection, FieldError } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { StrataException, type Grants } from '@strata/platform';
import { CollectionsRepository } from '../../collections/collections.repository.js';
import { compileAggregate } from '../../compiler/compile-aggregate.js';
import { DEFAULT_SORT } from '../../compiler/compile-select.js';
import type { TypedWhere } from '../../compiler/compile-where.js';
import { RecordPages } from '../../records/record-pages.js';
import { RecordsRepository } from '../../records/records.repository.js';
import { project } from '../project.js';
import type { LanguageQueryRequest } from './language.request.js';
import { parseQuery, QuerySyntaxError } from './parse.js';
import { translate } from './translate.js';
import { visibleCollections } from '../../records/collection-access.js';

export interface LanguageResult {
  data: unknown[];
  meta: { limit: number; offset?: number; hasMore: boolean };
}

/** `POST /query`: the string language, compiled like the canonical definition and run in the caller's workspace. */
@Injectable()
export class LanguageService {
  constructor(
    private readonly collections: CollectionsRepository,
    private readonly records: RecordsRepository,
    private readonly pages: RecordPages,
  ) {}

  /** `earlier`: the body's own problems (checkBody), answered together with the query's. */
  async run(
    scope: WorkspaceScope,
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
    // A collection whose records the caller may not list is not found, as FROM or INCLUDE (docs/identity.md).
    const readable = visibleCollections(this.collections, grants, 'list');
    const c = await readable.find(scope, { slug: ast.resource });
    const collections = new Map<string, Collection>();
    for (const inc of ast.includes) {
      if (!collections.has(inc.resource))
        collections.set(inc.resource, await readable.find(scope, { slug: inc.resource }));
    }
    const problems: FieldError[] = [...earlier];
    const q = translate(ast, c, collections, body.parameters ?? {}, problems);
    if (problems.length) throw StrataException.validation(problems, 'The query does not fit its collection');
    const target = { scope, collectionId: c.id };
    const limit = q.limit;
    if (q.kind === 'aggregate') {
      const compiled = compileAggregate({ ...target, ...q, limit: limit + 1 });
      const rows = await this.records.run<Record<string, unknown>>(scope, compiled);
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
    const filters = new Map<string, TypedWhere>(q.includes.filter((i) => i.where).map((i) => [i.path[0]!, i.where!]));
    const page = await this.pages.page(scope, {
      collection: c,
      query: {
        ...target,
        ...(q.where ? { where: q.where } : {}),
        ...(q.text ? { text: q.text } : {}),
        sort,
        limit,
        ...(q.offset ? { offset: q.offset } : {}),
      },
      sortSpec: '',
      expand: { paths: q.includes.map((i) => i.path), filters },
      grants,
    });
    return {
      data: q.select ? page.records.map((r) => project(r, q.select!)) : page.records,
      meta: { limit, ...(q.offset ? { offset: q.offset } : {}), hasMore: page.hasMore },
    };
  }
}
