import type { JsonObject, JsonValue } from '../http/resource.js';

export type SchemaDiscoveryMode = 'strict' | 'auto-evolving' | 'schemaless';

/** A property definition: the common fields; each type's own (`maxLength`, `items`, `target`…) are in docs/data.md. */
export interface PropertyDefinition {
  readonly id?: string;
  readonly name: string;
  readonly type: string;
  readonly description?: string;
  readonly required?: boolean;
  readonly nullable?: boolean;
  readonly default?: JsonValue;
  readonly enum?: readonly JsonValue[];
  readonly isUnique?: boolean;
  readonly immutable?: boolean;
  /** Keeps an index for filtering and sorting on the property (top level only). */
  readonly indexed?: boolean;
  readonly [option: string]: JsonValue | readonly JsonValue[] | undefined;
}

/** A collection (a "structure" in the older vocabulary). */
export interface Collection {
  readonly id: string;
  readonly workspaceSlug: string;
  readonly recordSlug: string;
  readonly name: string;
  readonly description?: string | null;
  readonly properties: PropertyDefinition[];
  readonly status: 'active' | 'inactive';
  readonly schemaDiscoveryMode: SchemaDiscoveryMode;
  readonly schemaDiscoveryConfig?: JsonObject | null;
  readonly enableVersioning: boolean;
  readonly retentionPolicy?: JsonObject | null;
  readonly defaultSearchField?: string | null;
  readonly metadata?: JsonObject;
  readonly tags?: string[];
  readonly createdBy?: string;
  readonly lastUpdatedBy?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly isDeleted?: boolean;
}

export interface CollectionInput {
  readonly name: string;
  readonly description?: string;
  readonly recordSlug?: string;
  readonly properties: readonly PropertyDefinition[];
  readonly schemaDiscoveryMode?: SchemaDiscoveryMode;
  readonly schemaDiscoveryConfig?: JsonObject;
  readonly enableVersioning?: boolean;
  readonly defaultSearchField?: string;
  readonly retentionPolicy?: JsonObject;
  readonly tags?: readonly string[];
  readonly status?: 'active' | 'inactive';
}

export interface CollectionListQuery {
  readonly limit?: number;
  readonly offset?: number;
  readonly status?: 'active' | 'inactive';
  /** Name or slug. */
  readonly search?: string;
  /** Soft-deleted collections too (`isDeleted: true`). */
  readonly includeDeleted?: boolean;
}

/** The `pagination` object of the offset-paged lists (collections, records). */
export interface OffsetPagination {
  readonly limit: number;
  readonly offset: number;
  readonly total?: number;
  readonly hasMore: boolean;
  readonly nextCursor?: string | null;
}

export interface CollectionList {
  readonly results: Collection[];
  readonly pagination: OffsetPagination;
}

/** A problem of a request, at the field it names (`properties[2].maxLength`, `data.email`). */
export interface FieldProblem {
  field: string;
  message: string;
}

/** `DELETE /structures/bulk`: per item, the deleted collections and the refused ones (by their place, `ids[1]`). */
export interface BulkDeleteResult {
  success: boolean;
  deleted: { id: string; recordSlug: string; deletedAt: string }[];
  failed: number;
  errors: { field: string; error: { code: string; message: string } }[];
}

/** `DELETE /structures/{id}/properties`. */
export interface PropertyRemoval {
  success: true;
  collection: Collection;
  /** How many records lost a value (with `force`). */
  valuesRemoved: number;
}

/** `POST /structures/validate`: a definition as a create would find it. */
export type DefinitionCheck = { valid: true } | { valid: false; errors: FieldProblem[] };

/** `POST /structures/{id}/validate` with a proposed definition: its problems, or how the live records fit it. */
export type ChangeCheck =
  | { valid: false; errors: FieldProblem[] }
  | {
      valid: boolean;
      errors: FieldProblem[];
      records: {
        checked: number;
        failed: number;
        byField: Record<string, number>;
        sample: { id: string; errors: FieldProblem[] }[];
      };
      /** Whether the PUT would start a migration, and of which properties (docs/data.md, "Migrations"). */
      migration: { required: boolean; properties: string[] };
    };
