import type { OffsetPagination } from '../collections/types.js';
import type { JsonObject, JsonValue } from '../http/resource.js';

export interface StrataRecord {
  readonly id: string;
  readonly structureId: string;
  readonly recordSlug?: string;
  readonly workspaceSlug?: string;
  readonly data: JsonObject;
  readonly metadata?: JsonObject | null;
  readonly status: string;
  readonly version: number;
  readonly previousVersion?: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly createdBy?: string;
  readonly updatedBy?: string;
}

export interface RecordCreate {
  readonly structureId: string;
  readonly data: JsonObject;
  readonly metadata?: JsonObject;
}

export interface RecordGetQuery {
  readonly includeHistory?: boolean;
  readonly includeChangelog?: boolean;
  readonly version?: number;
  /** Reference fields to expand (dotted for nested ones). */
  readonly expand?: readonly string[];
}

export interface RecordListQuery {
  readonly structureId?: string;
  /** `key:value` terms, comma-separated (AND): `amount:>100,status:[a,b]`. */
  readonly filter?: string;
  /** `field` ascending, `-field` descending, comma-separated. */
  readonly sort?: string;
  readonly limit?: number;
  readonly offset?: number;
  readonly cursor?: string;
  readonly includeCount?: boolean;
  readonly expand?: readonly string[];
}

export interface RecordList {
  readonly results: StrataRecord[];
  readonly pagination: OffsetPagination;
}

export interface RecordUpdateOptions {
  readonly createVersion?: boolean;
  readonly skipValidation?: boolean;
}

export interface RecordUpsert {
  /** The business key: primitives only. */
  readonly match: Readonly<Record<string, string | number | boolean | null>>;
  readonly data: JsonObject;
}

export interface UpsertResult {
  readonly operation: 'created' | 'updated';
  readonly data: { id: string; data: JsonObject; version: number; createdAt?: string; updatedAt?: string };
}

export interface BulkCreate {
  readonly structureId: string;
  readonly records: readonly { data: JsonObject }[];
  readonly options?: { skipValidation?: boolean; returnRecords?: boolean };
}

export interface BulkCreateResult {
  readonly success: boolean;
  readonly created: number;
  readonly failed: number;
  readonly records?: StrataRecord[];
  readonly errors?: JsonValue[];
}

export interface BulkUpdate {
  readonly updates: readonly { id: string; data: JsonObject }[];
  readonly options?: { skipValidation?: boolean; createVersions?: boolean };
}

export interface BulkUpdateResult {
  readonly success: boolean;
  readonly updated: number;
  readonly failed: number;
  readonly results?: JsonValue[];
  readonly errors?: JsonValue[];
}

export interface DeleteResult {
  readonly success: boolean;
  readonly id: string;
  readonly deletedAt: string;
}

export interface RecordVersion {
  readonly version: number;
  readonly data: JsonObject;
  readonly updatedAt?: string;
  readonly updatedBy?: string;
  readonly createdAt?: string;
  readonly changes?: Record<string, { old: JsonValue; new: JsonValue }>;
}

export interface RestoreResult {
  readonly id: string;
  readonly version: number;
  readonly restoredFrom: number;
  readonly data: JsonObject;
}

export interface ChangelogQuery {
  readonly limit?: number;
  readonly startDate?: string;
  readonly endDate?: string;
}

export interface ChangelogEntry {
  readonly id: string;
  readonly recordId: string;
  readonly action: string;
  readonly userId: string | null;
  readonly userName: string | null;
  readonly timestamp: string;
  readonly changes: Record<string, { field: string; oldValue: JsonValue; newValue: JsonValue }>;
  readonly metadata: JsonObject | null;
}

/** The canonical query definition (`POST /records/query`, saved queries). */
export interface QueryDefinition {
  /** The collection's slug. */
  readonly resource: string;
  readonly where?: JsonObject;
  readonly text?: { query: string; fields?: string[]; typoTolerance?: boolean };
  readonly sort?: readonly { field: string; direction: 'asc' | 'desc' }[];
  readonly page?: { limit: number; offset?: number } | { limit: number; cursor?: string };
  readonly select?: { fields: string[] };
  readonly include?: readonly { relation: string }[];
  readonly joins?: readonly JsonObject[];
}

/** `{data, meta}`: the canonical query's and a saved query's answer. */
export interface QueryResult<Row = StrataRecord> {
  readonly data: Row[];
  readonly meta: { limit?: number; offset?: number; total?: number; hasMore?: boolean; nextCursor?: string | null };
}
