import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { WorkspaceScope } from '@strata/db';
import type { CollectionRow } from '../collections.repository.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Where a scan of a collection's records goes on from: the last record read (by creation, then id). */
export interface ScanPosition {
  /** `created_at` as PostgreSQL prints it (microseconds kept: a JavaScript Date would lose them). */
  readonly createdAt: string;
  readonly id: string;
}

export interface ScannedRecord extends ScanPosition {
  readonly data: Record<string, unknown>;
}

/**
 * Reads for checking a proposed definition: the workspace's live collections, its live
 * records a page at a time, and which reference keys exist. Reads only; every statement
 * names the workspace.
 */
@Injectable()
export class RecordsScanRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Whether the collection has a record, soft-deleted ones included (a migration converts them too). */
  async anyRecord(scope: WorkspaceScope, collectionId: string): Promise<boolean> {
    const rows = await this.db.query<unknown[]>(
      'SELECT 1 FROM data.records WHERE workspace_slug = $1 AND collection_id = $2 LIMIT 1',
      [scope.workspace, collectionId],
    );
    return rows.length > 0;
  }

  /** The workspace's live collections (no lock: a check stores nothing). */
  liveCollections(scope: WorkspaceScope): Promise<CollectionRow[]> {
    return this.db.query<CollectionRow[]>(
      `SELECT * FROM data.collections WHERE workspace_slug = $1 AND deleted_at IS NULL`,
      [scope.workspace],
    );
  }

  /** The next `limit` live records of the collection after `after`, in creation order (the collection index's). */
  page(
    scope: WorkspaceScope,
    collectionId: string,
    after: ScanPosition | undefined,
    limit: number,
  ): Promise<ScannedRecord[]> {
    const select = `SELECT id, data, created_at::text AS "createdAt" FROM data.records
       WHERE workspace_slug = $1 AND collection_id = $2 AND deleted_at IS NULL`;
    return after
      ? this.db.query<ScannedRecord[]>(
          `${select} AND (created_at, id) > ($4::timestamptz, $5::uuid) ORDER BY created_at, id LIMIT $3`,
          [scope.workspace, collectionId, limit, after.createdAt, after.id],
        )
      : this.db.query<ScannedRecord[]>(`${select} ORDER BY created_at, id LIMIT $3`, [
          scope.workspace,
          collectionId,
          limit,
        ]);
  }

  /** Which of `wanted` name a live record of the collection `targetSlug` (by id or by `targetField`). */
  async existingKeys(
    scope: WorkspaceScope,
    targetSlug: string,
    targetField: string,
    wanted: readonly string[],
  ): Promise<Set<string>> {
    const from = `FROM data.records r JOIN data.collections c ON c.id = r.collection_id
        WHERE r.workspace_slug = $1 AND c.workspace_slug = $1 AND c.record_slug = $2 AND c.deleted_at IS NULL
          AND r.deleted_at IS NULL`;
    const rows =
      targetField === 'id'
        ? // By primary key: a value that is no UUID names no record.
          await this.db.query<{ key: string }[]>(`SELECT r.id::text AS key ${from} AND r.id = ANY($3::uuid[])`, [
            scope.workspace,
            targetSlug,
            wanted.filter((w) => UUID.test(w)).map((w) => w.toLowerCase()),
          ])
        : await this.db.query<{ key: string }[]>(
            `SELECT r.data ->> $4 AS key ${from} AND r.data ->> $4 = ANY($3::text[])`,
            [scope.workspace, targetSlug, wanted, targetField],
          );
    return new Set(rows.map((r) => r.key));
  }
}
