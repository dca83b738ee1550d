/**
 * The one internal form of a records query. The list filter, the legacy URL
 * parameters, the canonical definition and the string language all parse into
 * it, and one compiler turns it into SQL.
 */

/** Record columns addressable without the `data.` prefix (a property that shadows one loses). */
export const SYSTEM_COLUMNS = {
  id: 'uuid',
  recordSlug: 'string',
  status: 'string',
  workspaceSlug: 'string',
  version: 'number',
  createdAt: 'datetime',
  updatedAt: 'datetime',
  createdBy: 'string',
  updatedBy: 'string',
} as const;
export type SystemColumn = keyof typeof SYSTEM_COLUMNS;

export type FieldRef =
  | { readonly kind: 'system'; readonly column: SystemColumn }
  /** A path inside `data`: `data.address.city` → ['address', 'city']. */
  | { readonly kind: 'data'; readonly path: readonly string[] };

export const OPERATORS = [
  'eq',
  'ne',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'nin',
  'contains',
  'startsWith',
  'endsWith',
  'hasAny',
  'hasAll',
  'exists',
] as const;
export type Operator = (typeof OPERATORS)[number];

export interface Condition {
  readonly field: FieldRef;
  readonly op: Operator;
  readonly value: unknown;
}

export type Where =
  | { readonly and: readonly Where[] }
  | { readonly or: readonly Where[] }
  | { readonly not: Where }
  | { readonly condition: Condition };

export interface SortKey {
  readonly field: FieldRef;
  readonly direction: 'asc' | 'desc';
}

/** A records query, already checked against its collection. */
export interface RecordQuery {
  readonly where?: Where;
  readonly sort: readonly SortKey[];
  readonly limit: number;
  readonly offset?: number;
  /** Decoded keyset position: the sort values and id of the last row of the previous page. */
  readonly after?: { readonly values: readonly unknown[]; readonly id: string };
}

/** How a field compares: by the property's type, or as text in schemaless collections. */
export type FieldType = 'string' | 'number' | 'boolean' | 'datetime' | 'uuid' | 'array' | 'object' | 'reference';

export function fieldName(field: FieldRef): string {
  return field.kind === 'system' ? field.column : `data.${field.path.join('.')}`;
}

/** Full-text search over string fields; typoTolerance adds trigram similarity. */
export interface TextSearch {
  readonly query: string;
  readonly fields: readonly FieldRef[];
  readonly typoTolerance: boolean;
}
