import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';

/** LIKE's wildcards taken literally. */
const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A list page as the function and trigger lists take it: a search in one column, sort keys, a page. */
export interface PageQuery<S extends string, F extends string> {
  readonly search: string | undefined;
  readonly searchField: S;
  readonly sort: readonly { readonly field: F; readonly direction: 'asc' | 'desc' }[];
  readonly page: number;
  readonly limit: number;
}

/**
 * Runs a list query (already scoped to its workspace by the caller): the search as
 * a case-insensitive substring with wildcards literal, the sort keys then the id,
 * one page, and the count of every match. Columns come from the caller's maps,
 * never from the request.
 */
export async function pageOf<E extends ObjectLiteral, S extends string, F extends string>(
  query: SelectQueryBuilder<E>,
  q: PageQuery<S, F>,
  columns: {
    readonly search: Readonly<Record<S, string>>;
    readonly sort: Readonly<Record<F, string>>;
    readonly id: string;
  },
): Promise<{ rows: E[]; total: number }> {
  if (q.search) {
    query.andWhere(`${columns.search[q.searchField]} ILIKE :search ESCAPE '\\'`, {
      search: `%${likeLiteral(q.search)}%`,
    });
  }
  for (const [i, s] of q.sort.entries()) {
    const direction = s.direction === 'asc' ? 'ASC' : 'DESC';
    if (i === 0) query.orderBy(columns.sort[s.field], direction);
    else query.addOrderBy(columns.sort[s.field], direction);
  }
  query.addOrderBy(columns.id, 'ASC');
  const [rows, total] = await query
    .offset((q.page - 1) * q.limit)
    .limit(q.limit)
    .getManyAndCount();
  return { rows, total };
}
