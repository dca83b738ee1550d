import type { Collection, FieldError, ReferenceProperty } from '@strata/contracts';
import { show } from '../../schema/issues.js';
import { MAX_OFFSET } from '@strata/platform';
import { typedCondition } from '../../compiler/check-condition.js';
import type { AggregateItem, GroupKey } from '../../compiler/compile-aggregate.js';
import type { TypedSortKey } from '../../compiler/compile-select.js';
import type { TypedWhere } from '../../compiler/compile-where.js';
import { resolveField } from '../../compiler/resolve-field.js';
import type { FieldRef, Operator, TextSearch } from '../../compiler/query.types.js';
import type { AstQuery, AstValue, AstWhere } from './parse.js';

export const LANGUAGE_QUERY_LIMITS = { maxConditions: 100, recordsLimit: 100, groupsLimit: 1000 } as const;

export type TranslatedQuery =
  | {
      readonly kind: 'records';
      readonly where?: TypedWhere;
      readonly text?: TextSearch;
      readonly sort: TypedSortKey[];
      readonly select?: string[];
      readonly includes: { path: string[]; where?: TypedWhere }[];
      readonly limit: number;
      readonly offset?: number;
    }
  | {
      readonly kind: 'aggregate';
      readonly where?: TypedWhere;
      readonly text?: TextSearch;
      readonly groups: GroupKey[];
      readonly aggregates: AggregateItem[];
      readonly order: { position: number; direction: 'asc' | 'desc' }[];
      readonly limit: number;
      readonly offset?: number;
    };

/**
 * Checks a parsed query against its collection (and the collections its
 * INCLUDEs name) and turns it into the internal form shared with the canonical
 * definition. Field names may be bare (a system column, else a data field) or
 * `data.`-prefixed. Named parameters are replaced by the caller's values, which
 * must fit the field's type without coercion. Problems name the position in
 * the query text (`query@42`).
 */
export function translate(
  ast: AstQuery,
  c: Collection,
  collections: ReadonlyMap<string, Collection>,
  parameters: Readonly<Record<string, unknown>>,
  problems: FieldError[],
): TranslatedQuery {
  let conditions = 0;
  const problem = (at: number, message: string) => problems.push({ field: `query@${at}`, message });
  const value = (v: AstValue, at: number): unknown => {
    if ('literal' in v) return v.literal;
    if ('list' in v) return v.list.map((item) => value(item, at));
    if (!Object.hasOwn(parameters, v.parameter)) {
      problem(v.at, `parameter :${v.parameter} is not given`);
      return undefined;
    }
    return parameters[v.parameter];
  };
  const where = (w: AstWhere, target: Collection): TypedWhere | undefined => {
    if ('and' in w) return { and: w.and.map((x) => where(x, target)).filter((x): x is TypedWhere => !!x) };
    if ('or' in w) return { or: w.or.map((x) => where(x, target)).filter((x): x is TypedWhere => !!x) };
    if ('not' in w) {
      const inner = where(w.not, target);
      return inner ? { not: inner } : undefined;
    }
    if ('search' in w) {
      problem(w.search.at, 'SEARCH can only be combined with AND at the top level of WHERE');
      return undefined;
    }
    const { field: name, op, at } = w.condition;
    if (++conditions > LANGUAGE_QUERY_LIMITS.maxConditions) {
      problem(at, `a query holds at most ${LANGUAGE_QUERY_LIMITS.maxConditions} conditions`);
      return undefined;
    }
    const field = resolveField(name, target, true);
    if ('problem' in field) {
      problem(at, field.problem);
      return undefined;
    }
    const given = value(w.condition.value, at);
    if (given === undefined) return undefined;
    const checked = typedCondition(field, name, op as Operator, given);
    if ('problem' in checked) {
      problem(at, checked.problem);
      return undefined;
    }
    return { condition: checked };
  };

  // SEARCH(...) is a top-level conjunct: lift it out of the WHERE tree.
  let text: TextSearch | undefined;
  let rest: AstWhere | null = ast.where;
  const conjuncts = rest === null ? [] : 'and' in rest ? rest.and : [rest];
  const searches = conjuncts.filter((x): x is Extract<AstWhere, { search: unknown }> => 'search' in x);
  if (searches.length > 1) problem(searches[1]!.search.at, 'a query holds one SEARCH');
  if (searches[0]) {
    const s = searches[0].search;
    const query = value(s.text, s.at);
    const fields: FieldRef[] = [];
    for (const name of s.fields) {
      const field = resolveField(name, c, true);
      if ('problem' in field) problem(s.at, field.problem);
      else if (field.type !== 'string' && field.type !== 'text')
        problem(s.at, `SEARCH IN needs string fields; ${name} is ${field.type}`);
      else fields.push(field.ref);
    }
    if (typeof query !== 'string' || query.trim() === '')
      problem(s.at, `SEARCH needs a non-empty string, got ${show(query)}`);
    else text = { query, fields, typoTolerance: s.fuzzy };
    const others = conjuncts.filter((x) => !('search' in x));
    rest = others.length === 0 ? null : others.length === 1 ? others[0]! : { and: others };
  }
  const typedWhere = rest ? where(rest, c) : undefined;
  const common = {
    ...(typedWhere ? { where: typedWhere } : {}),
    ...(text ? { text } : {}),
    ...(ast.offset ? { offset: ast.offset } : {}),
  };

  const aggregates = (ast.select ?? []).filter((s) => s.kind === 'aggregate');
  if (aggregates.length || ast.group) {
    return aggregate(ast, c, problems, problem, common);
  }

  const sort: TypedSortKey[] = [];
  for (const item of ast.order ?? []) {
    const field = resolveField(item.field, c, true);
    if ('problem' in field) problems.push({ field: 'query', message: `ORDER BY: ${field.problem}` });
    else sort.push({ field: field.ref, type: field.type, direction: item.direction });
  }
  const select: string[] = [];
  for (const item of ast.select ?? []) {
    if (item.kind !== 'field') continue;
    // Selecting a secret field is allowed: the presenter masks it unless the caller holds secrets:reveal.
    const field = resolveField(item.field, c, true, 'select');
    if ('problem' in field) problems.push({ field: 'query', message: `SELECT: ${field.problem}` });
    else select.push(field.ref.kind === 'system' ? field.ref.column : `data.${field.ref.path.join('.')}`);
  }
  const includes: { path: string[]; where?: TypedWhere }[] = [];
  for (const inc of ast.includes) {
    const property = c.properties.find(
      (p): p is ReferenceProperty => p.name === inc.relation && p.type === 'reference',
    );
    const target = collections.get(inc.resource);
    if (!property) problem(inc.at, `INCLUDE ${inc.relation}: not a reference field of ${c.recordSlug}`);
    else if (property.target !== inc.resource || !target) {
      problem(inc.at, `INCLUDE ${inc.relation} FROM ${inc.resource}: ${inc.relation} refers to ${property.target}`);
    } else {
      const incWhere = inc.where ? where(inc.where, target) : undefined;
      includes.push({ path: [inc.relation], ...(incWhere ? { where: incWhere } : {}) });
    }
  }
  if ((ast.offset ?? 0) > MAX_OFFSET)
    problems.push({ field: 'query', message: `OFFSET must be at most ${MAX_OFFSET}` });
  const limit = ast.limit ?? 20;
  if (limit < 1 || limit > LANGUAGE_QUERY_LIMITS.recordsLimit) {
    problems.push({ field: 'query', message: `LIMIT must be between 1 and ${LANGUAGE_QUERY_LIMITS.recordsLimit}` });
  }
  return { kind: 'records', ...common, sort, ...(select.length ? { select } : {}), includes, limit };
}

function aggregate(
  ast: AstQuery,
  c: Collection,
  problems: FieldError[],
  problem: (at: number, message: string) => void,
  common: { where?: TypedWhere; text?: TextSearch; offset?: number },
): TranslatedQuery {
  const groups: GroupKey[] = [];
  for (const name of ast.group ?? []) {
    const field = resolveField(name, c, true);
    if ('problem' in field) problems.push({ field: 'query', message: `GROUP BY: ${field.problem}` });
    else groups.push({ name, field: field.ref });
  }
  const aggregates: AggregateItem[] = [];
  for (const item of ast.select ?? []) {
    if (item.kind === 'field') {
      if (!(ast.group ?? []).includes(item.field)) {
        problems.push({ field: 'query', message: `SELECT ${item.field}: a plain field must also be in GROUP BY` });
      }
      continue;
    }
    const alias = item.alias ?? (item.field === null ? item.fn : `${item.fn}_${item.field.replace(/\./g, '_')}`);
    if (item.field === null) {
      if (item.fn !== 'count') problem(item.at, `${item.fn.toUpperCase()}(*) is not allowed: name a field`);
      aggregates.push({ alias, fn: item.fn, field: null, type: null });
      continue;
    }
    const field = resolveField(item.field, c, true);
    if ('problem' in field) {
      problem(item.at, field.problem);
      continue;
    }
    const numeric = item.fn === 'sum' || item.fn === 'avg';
    if (numeric && field.type !== 'number' && field.type !== 'text') {
      problem(item.at, `${item.fn.toUpperCase()}(${item.field}) needs a number field (it is ${field.type})`);
      continue;
    }
    aggregates.push({ alias, fn: item.fn, field: field.ref, type: field.type });
  }
  const names = [...groups.map((g) => g.name), ...aggregates.map((a) => a.alias)];
  const order: { position: number; direction: 'asc' | 'desc' }[] = [];
  for (const item of ast.order ?? []) {
    const position = names.indexOf(item.field) + 1;
    if (position === 0)
      problems.push({
        field: 'query',
        message: `ORDER BY ${item.field}: order by a GROUP BY field or an aggregate alias (${names.join(', ')})`,
      });
    else order.push({ position, direction: item.direction });
  }
  if ((ast.offset ?? 0) > MAX_OFFSET)
    problems.push({ field: 'query', message: `OFFSET must be at most ${MAX_OFFSET}` });
  const limit = ast.limit ?? 100;
  if (limit < 1 || limit > LANGUAGE_QUERY_LIMITS.groupsLimit) {
    problems.push({
      field: 'query',
      message: `LIMIT must be between 1 and ${LANGUAGE_QUERY_LIMITS.groupsLimit} for grouped queries`,
    });
  }
  return { kind: 'aggregate', ...common, groups, aggregates, order, limit };
}
