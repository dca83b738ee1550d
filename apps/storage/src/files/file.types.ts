import type { Visibility } from '../buckets/bucket.types.js';

/** The record a file follows (docs/storage.md, "Links"). */
export interface FileLink {
  readonly collection: string;
  readonly recordId: string;
}

/** A file as stored. A row exists only once its bytes are in place: its status is always `ready` for now. */
export interface FileRow {
  readonly id: string;
  readonly workspace: string;
  readonly bucket: string;
  readonly name: string;
  readonly size: number;
  readonly contentType: string;
  readonly sha256: string;
  readonly visibility: Visibility;
  readonly metadata: Record<string, unknown>;
  readonly linkCollection: string | null;
  readonly linkRecordId: string | null;
  readonly status: 'ready';
  readonly objectKey: string;
  readonly createdBy: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A file as the API shows it. */
export interface FileView {
  readonly id: string;
  readonly workspace: string;
  readonly bucket: string;
  readonly name: string;
  readonly size: number;
  readonly contentType: string;
  readonly sha256: string;
  readonly etag: string;
  readonly visibility: Visibility;
  readonly metadata: Record<string, unknown>;
  readonly link: FileLink | null;
  readonly status: 'ready';
  readonly createdBy: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** The strong ETag of a file's bytes: their SHA-256. */
export const etagOf = (f: { sha256: string }): string => `"${f.sha256}"`;

export function fileView(f: FileRow): FileView {
  return {
    id: f.id,
    workspace: f.workspace,
    bucket: f.bucket,
    name: f.name,
    size: f.size,
    contentType: f.contentType,
    sha256: f.sha256,
    etag: etagOf(f),
    visibility: f.visibility,
    metadata: f.metadata,
    link:
      f.linkCollection !== null && f.linkRecordId !== null
        ? { collection: f.linkCollection, recordId: f.linkRecordId }
        : null,
    status: f.status,
    createdBy: f.createdBy,
    createdAt: f.createdAt.toISOString(),
    updatedAt: f.updatedAt.toISOString(),
  };
}

export const SORTS = ['createdAt', '-createdAt', 'name', '-name', 'size', '-size'] as const;
export type FileSort = (typeof SORTS)[number];

/** What a file list filters on. */
export interface FileFilters {
  readonly bucket?: string | undefined;
  readonly prefix?: string | undefined;
  /** `/` groups names below the prefix into common prefixes (folders). */
  readonly delimiter?: '/' | undefined;
  readonly contains?: string | undefined;
  /** `image/png`, or a family `image/*`. */
  readonly contentType?: string | undefined;
  readonly linkCollection?: string | undefined;
  readonly linkRecordId?: string | undefined;
  readonly createdAfter?: Date | undefined;
  readonly createdBefore?: Date | undefined;
}

/** Where a page starts: the last row's sort value and id. */
export interface FileCursor {
  readonly value: string | number;
  readonly id: string;
}
