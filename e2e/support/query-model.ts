/**
 * A reference model of record queries for the differential test: random
 * conditions over a known data set, what they must match (computed here in
 * plain JavaScript from the documented semantics, not by the service), and
 * the same query rendered in each of the API's forms.
 */
import fc from 'fast-check';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Data = Record<string, Json>;

export type FieldKind = 'string' | 'number' | 'boolean' | 'datetime' | 'array' | 'object' | 'reference' | 'uuid';
export interface FieldSpec {
  /** As written in a query: `data.qty`, `data.dims.w`, or a system column. */
  readonly name: string;
  readonly kind: FieldKind;
  /** Where the value is in a model row. */
  readonly get: (row: ModelRow) => Json | undefined;
}

export interface ModelRow {
  readonly id: string;
  readonly createdAt: string;
  readonly data: Data;
}

export type Op =
  | 'eq'
  | 'ne'
  | 'gt'
  | 'gte'
  | 'lt'
  | 'lte'
  | 'in'
  | 'nin'
  | 'contains'
  | 'startsWith'
  | 'endsWith'
  | 'hasAny'
  | 'hasAll'
  | 'exists';

export interface Cond {
  readonly field: FieldSpec;
  readonly op: Op;
  readonly value: Json;
}
export type Tree = { and: Tree[] } | { or: Tree[] } | { not: Tree } | { cond: Cond };

const OPS_BY_KIND: Record<FieldKind, readonly Op[]> = {
  string: ['eq', 'ne', 'in', 'nin', 'contains', 'startsWith', 'endsWith', 'exists'],
  number: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists'],
  datetime: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'exists'],
  boolean: ['eq', 'ne', 'exists'],
  array: ['eq', 'ne', 'hasAny', 'hasAll', 'exists'],
  object: ['eq', 'ne', 'exists'],
  reference: ['eq', 'ne', 'in', 'nin', 'exists'],
  uuid: ['eq', 'ne', 'in', 'nin'],
};

// ---- the oracle -------------------------------------------------------------

function jsonEqual(a: Json, b: Json): boolean {
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]!));
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  const oa = a as Record<string, Json>;
  const ob = b as Record<string, Json>;
  return jsonEqual(ka, kb) && ka.every((k) => jsonEqual(oa[k]!, ob[k]!));
}

/** The field's value as its kind compares it, or undefined when absent or of another JSON type. */
function typed(kind: FieldKind, v: Json | undefined): number | string | boolean | undefined {
  switch (kind) {
    case 'number':
      return typeof v === 'number' ? v : undefined;
    case 'boolean':
      return typeof v === 'boolean' ? v : undefined;
    case 'datetime':
      return typeof v === 'string' ? Date.parse(v) : undefined;
    case 'string':
    case 'reference':
    case 'uuid':
      return typeof v === 'string' ? v : undefined;
    case 'array':
    case 'object':
      return undefined;
  }
}

function asComparable(kind: FieldKind, v: Json): number | string | boolean {
  return kind === 'datetime' ? Date.parse(v as string) : (v as number | string | boolean);
}

function matchesCond(row: ModelRow, { field, op, value }: Cond): boolean {
  const raw = field.get(row);
  const t = typed(field.kind, raw);
  const eq = (): boolean => {
    if (raw === undefined) return false;
    if (field.kind === 'datetime' && typeof value === 'string') return t === Date.parse(value);
    return jsonEqual(raw, value);
  };
  switch (op) {
    case 'eq':
      return eq();
    case 'ne':
      return !eq();
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      if (t === undefined) return false;
      const v = asComparable(field.kind, value);
      return op === 'gt' ? t > v : op === 'gte' ? t >= v : op === 'lt' ? t < v : t <= v;
    }
    case 'in':
      return t !== undefined && (value as Json[]).some((v) => asComparable(field.kind, v) === t);
    case 'nin':
      return !(t !== undefined && (value as Json[]).some((v) => asComparable(field.kind, v) === t));
    case 'contains':
    case 'startsWith':
    case 'endsWith': {
      if (typeof t !== 'string') return false;
      const hay = t.toLowerCase();
      const needle = (value as string).toLowerCase();
      return op === 'contains'
        ? hay.includes(needle)
        : op === 'startsWith'
          ? hay.startsWith(needle)
          : hay.endsWith(needle);
    }
    case 'hasAll':
    case 'hasAny': {
      if (!Array.isArray(raw)) return false;
      const has = (v: Json) => raw.some((x) => jsonEqual(x, v));
      return op === 'hasAll' ? (value as Json[]).every(has) : (value as Json[]).some(has);
    }
    case 'exists':
      return (raw !== undefined) === value;
  }
}

export function matches(row: ModelRow, tree: Tree): boolean {
  if ('cond' in tree) return matchesCond(row, tree.cond);
  if ('not' in tree) return !matches(row, tree.not);
  if ('and' in tree) return tree.and.every((t) => matches(row, t));
  return tree.or.some((t) => matches(row, t));
}

export interface SortSpec {
  readonly field: FieldSpec;
  readonly direction: 'asc' | 'desc';
}

/** JSON ordering of sort keys as documented: absent = null, first when ascending; the id breaks ties. */
export function compareRows(a: ModelRow, b: ModelRow, sort: SortSpec): number {
  const rank = (v: Json | undefined): [number, number | string | boolean] =>
    v === undefined || v === null
      ? [0, 0]
      : typeof v === 'string'
        ? [1, v]
        : typeof v === 'number'
          ? [2, v]
          : typeof v === 'boolean'
            ? [3, v]
            : [4, 0];
  const [ra, va] = rank(sort.field.get(a));
  const [rb, vb] = rank(sort.field.get(b));
  let c = ra !== rb ? ra - rb : va < vb ? -1 : va > vb ? 1 : 0;
  if (sort.direction === 'desc') c = -c;
  return c !== 0 ? c : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

// ---- generation -------------------------------------------------------------

/** Random conditions whose values are drawn mostly from the data set, so that they match something. */
export function conditionArb(fields: readonly FieldSpec[], rows: readonly ModelRow[], ops?: readonly Op[]) {
  return fc
    .constantFrom(...fields)
    .chain((field) => {
      const allowed = OPS_BY_KIND[field.kind].filter((op) => !ops || ops.includes(op));
      return allowed.length ? fc.tuple(fc.constant(field), fc.constantFrom(...allowed)) : fc.constant(undefined);
    })
    .filter((x): x is [FieldSpec, Op] => x !== undefined)
    .chain(([field, op]) => valueArb(field, op, rows).map((value): Cond => ({ field, op, value })));
}

function seen(field: FieldSpec, rows: readonly ModelRow[]): Json[] {
  return rows.map((r) => field.get(r)).filter((v): v is Json => v !== undefined && v !== null);
}

function scalarArb(field: FieldSpec, rows: readonly ModelRow[]): fc.Arbitrary<Json> {
  const pool = seen(field, rows);
  const fresh: fc.Arbitrary<Json> =
    field.kind === 'number'
      ? fc.oneof(fc.integer({ min: -50, max: 150 }), fc.constantFrom(0, 2.5, -0.5, 1e6))
      : field.kind === 'datetime'
        ? fc.integer({ min: Date.UTC(2022, 0, 1), max: Date.UTC(2027, 0, 1) }).map((ms) => new Date(ms).toISOString())
        : field.kind === 'boolean'
          ? fc.boolean()
          : field.kind === 'uuid' || field.kind === 'reference'
            ? fc.uuid({ version: 4 })
            : fc.constantFrom('zzz', 'alpha', 'Beta');
  return pool.length
    ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...pool) }, { weight: 1, arbitrary: fresh })
    : fresh;
}

function fragmentArb(field: FieldSpec, rows: readonly ModelRow[]): fc.Arbitrary<string> {
  const strings = seen(field, rows).filter((v): v is string => typeof v === 'string' && v.length > 0);
  const slice = strings.length
    ? fc.tuple(fc.constantFrom(...strings), fc.nat(), fc.integer({ min: 1, max: 4 })).map(([s, start, len]) => {
        const from = start % s.length;
        return s.slice(from, from + len);
      })
    : fc.constant('a');
  return fc.oneof(
    slice,
    slice.map((s) => s.toUpperCase()),
    fc.constantFrom('%', '_', '\\', 'zz'),
  );
}

function valueArb(field: FieldSpec, op: Op, rows: readonly ModelRow[]): fc.Arbitrary<Json> {
  switch (op) {
    case 'exists':
      return fc.boolean();
    case 'in':
    case 'nin':
      return fc.array(scalarArb(field, rows), { minLength: 1, maxLength: 4 });
    case 'contains':
    case 'startsWith':
    case 'endsWith':
      return fragmentArb(field, rows);
    case 'hasAny':
    case 'hasAll': {
      const items = rows.flatMap((r) => (Array.isArray(field.get(r)) ? (field.get(r) as Json[]) : []));
      const item = items.length ? fc.constantFrom(...items) : fc.constant('x');
      return fc.array(fc.oneof(item, fc.constant('nope')), { minLength: 1, maxLength: 3 });
    }
    case 'eq':
    case 'ne':
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      if (field.kind === 'array' || field.kind === 'object') {
        const pool = seen(field, rows);
        return pool.length ? fc.constantFrom(...pool) : fc.constant([]);
      }
      return scalarArb(field, rows);
  }
}

export function treeArb(cond: fc.Arbitrary<Cond>, depth = 3): fc.Arbitrary<Tree> {
  const leaf = cond.map((c): Tree => ({ cond: c }));
  if (depth === 0) return leaf;
  const sub = treeArb(cond, depth - 1);
  return fc.oneof(
    { weight: 3, arbitrary: leaf },
    { weight: 1, arbitrary: fc.array(sub, { minLength: 1, maxLength: 3 }).map((and): Tree => ({ and })) },
    { weight: 1, arbitrary: fc.array(sub, { minLength: 1, maxLength: 3 }).map((or): Tree => ({ or })) },
    { weight: 1, arbitrary: sub.map((not): Tree => ({ not })) },
  );
}

// ---- rendering --------------------------------------------------------------

/** The canonical `where` of a tree. */
export function toCanonical(tree: Tree): Record<string, unknown> {
  if ('cond' in tree) return { [tree.cond.field.name]: { [tree.cond.op]: tree.cond.value } };
  if ('not' in tree) return { not: toCanonical(tree.not) };
  if ('and' in tree) return { and: tree.and.map(toCanonical) };
  return { or: tree.or.map(toCanonical) };
}

/** The canonical `where` with every value a `${vN}` variable, and the variables' declarations and values. */
export function toSaved(tree: Tree): {
  where: Record<string, unknown>;
  variables: Record<string, { type: string; required: boolean }>;
  values: Record<string, Json>;
} {
  const variables: Record<string, { type: string; required: boolean }> = {};
  const values: Record<string, Json> = {};
  const walk = (t: Tree): Record<string, unknown> => {
    if ('cond' in t) {
      const { field, op, value } = t.cond;
      const declared = variableType(field.kind, op, value);
      if (!declared) return { [field.name]: { [op]: value } };
      const name = `v${Object.keys(variables).length + 1}`;
      variables[name] = { type: declared, required: true };
      values[name] = value;
      return { [field.name]: { [op]: `\${${name}}` } };
    }
    if ('not' in t) return { not: walk(t.not) };
    if ('and' in t) return { and: t.and.map(walk) };
    return { or: t.or.map(walk) };
  };
  return { where: walk(tree), variables, values };
}

/** The declared type of a variable holding a condition's whole value; undefined keeps it literal. */
function variableType(kind: FieldKind, op: Op, value: Json): string | undefined {
  if (Array.isArray(value) || (value !== null && typeof value === 'object')) return undefined;
  if (op === 'exists') return 'boolean';
  switch (kind) {
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'datetime':
      return 'datetime';
    case 'uuid':
      return 'uuid';
    case 'string':
    case 'reference':
    case 'array':
    case 'object':
      return 'string';
  }
}

const LANGUAGE_OPS: Partial<Record<Op, string>> = { eq: '=', ne: '!=', gt: '>', gte: '>=', lt: '<', lte: '<=' };

/** The string language's WHERE clause of a tree, every value a named parameter. */
export function toLanguage(tree: Tree): { where: string; parameters: Record<string, Json> } {
  const parameters: Record<string, Json> = {};
  const param = (value: Json): string => {
    const name = `p${Object.keys(parameters).length + 1}`;
    parameters[name] = value;
    return `:${name}`;
  };
  const list = (values: Json): string => `(${(values as Json[]).map(param).join(', ')})`;
  const walk = (t: Tree): string => {
    if ('not' in t) return `NOT (${walk(t.not)})`;
    if ('and' in t) return `(${t.and.map(walk).join(' AND ')})`;
    if ('or' in t) return `(${t.or.map(walk).join(' OR ')})`;
    const { field, op, value } = t.cond;
    const name = field.name;
    switch (op) {
      case 'in':
        return `${name} IN ${list(value)}`;
      case 'nin':
        return `${name} NOT IN ${list(value)}`;
      case 'contains':
        return `${name} CONTAINS ${param(value)}`;
      case 'startsWith':
        return `${name} STARTS WITH ${param(value)}`;
      case 'endsWith':
        return `${name} ENDS WITH ${param(value)}`;
      case 'hasAny':
        return `${name} HAS ANY ${list(value)}`;
      case 'hasAll':
        return `${name} HAS ALL ${list(value)}`;
      case 'exists':
        // exists is about presence; IS [NOT] NULL also treats a JSON null as no value.
        return value ? `(${name} IS NOT NULL OR ${name} = NULL)` : `(${name} IS NULL AND NOT ${name} = NULL)`;
      case 'eq':
      case 'ne':
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        return `${name} ${LANGUAGE_OPS[op]!} ${param(value)}`;
    }
  };
  return { where: walk(tree), parameters };
}

/** The records list's `filter` for an AND of conditions the filter syntax can say; undefined when it cannot. */
export function toFilter(conds: readonly Cond[]): string | undefined {
  const terms: string[] = [];
  for (const { field, op, value } of conds) {
    if (['array', 'object'].includes(field.kind) || op === 'exists' || op === 'hasAny' || op === 'hasAll')
      return undefined;
    const key = field.name;
    const v = (x: Json) => quote(typeof x === 'string' ? x : JSON.stringify(x));
    switch (op) {
      case 'eq':
        terms.push(`${key}:${v(value)}`);
        break;
      case 'ne':
        terms.push(`${key}:!${v(value)}`);
        break;
      case 'gt':
        terms.push(`${key}:>${v(value)}`);
        break;
      case 'gte':
        terms.push(`${key}:>=${v(value)}`);
        break;
      case 'lt':
        terms.push(`${key}:<${v(value)}`);
        break;
      case 'lte':
        terms.push(`${key}:<=${v(value)}`);
        break;
      case 'in':
        terms.push(`${key}:[${(value as Json[]).map(v).join(',')}]`);
        break;
      case 'nin':
        terms.push(`${key}:![${(value as Json[]).map(v).join(',')}]`);
        break;
      case 'contains':
        terms.push(`${key}:*${v(value)}*`);
        break;
      case 'startsWith':
        terms.push(`${key}:${v(value)}*`);
        break;
      case 'endsWith':
        terms.push(`${key}:*${v(value)}`);
        break;
    }
  }
  return terms.join(',');
}

/** A filter value, double-quoted (escaping `"` and `\`) so that any text is one value. */
function quote(text: string): string {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
