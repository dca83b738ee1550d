import type { EventRecord } from '@strata/contracts';
import { own } from '../schema/issues.js';

/** The columns of data.records, for statements that return rows (RecordRow without record_slug). */
export const RECORD_COLUMNS =
  'id, workspace_slug, collection_id, data, metadata, status, version, created_by, updated_by, created_at, updated_at, deleted_at, deleted_by, expires_at';

/** A row of data.records joined with its collection's slug. */
export interface RecordRow {
  id: string;
  workspace_slug: string;
  collection_id: string;
  record_slug: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown> | null;
  status: string;
  version: number;
  created_by: string;
  updated_by: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  deleted_by: string | null;
  expires_at: Date | null;
}

/** A record as the records API returns it. */
export interface RecordResponse {
  id: string;
  structureId: string;
  recordSlug: string;
  workspaceSlug: string;
  data: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  status: string;
  version: number;
  createdAt: string;
  updatedAt: string;
  createdBy: string;
  updatedBy: string;
  expiresAt?: string;
}

export function toResponse(row: RecordRow, data: Record<string, unknown>): RecordResponse {
  return {
    id: row.id,
    structureId: row.collection_id,
    recordSlug: row.record_slug,
    workspaceSlug: row.workspace_slug,
    data,
    ...(row.metadata ? { metadata: row.metadata } : {}),
    status: row.status,
    version: row.version,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    createdBy: row.created_by,
    updatedBy: row.updated_by,
    ...(row.expires_at ? { expiresAt: row.expires_at.toISOString() } : {}),
  };
}

export function toEventRecord(row: RecordRow, data: Record<string, unknown>): EventRecord {
  return {
    id: row.id,
    workspaceSlug: row.workspace_slug,
    recordSlug: row.record_slug,
    data,
    status: row.status,
    version: row.version,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    createdBy: row.created_by,
    updatedBy: row.updated_by,
  };
}

/** Per-field changes between two versions of a record's data: `{field: {old, new}}`. */
export function diff(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): Record<string, { old: unknown; new: unknown }> {
  const changes: Record<string, { old: unknown; new: unknown }> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const [old, next] = [own(before, key), own(after, key)];
    if (JSON.stringify(old) !== JSON.stringify(next)) {
      changes[key] = { old: old ?? null, new: next ?? null };
    }
  }
  return changes;
}
