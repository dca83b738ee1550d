import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, rowsOf, type Tx, type WorkspaceScope } from '@strata/db';
import type { BucketRow, BucketSettings } from './bucket.types.js';

const COLUMNS = `workspace_slug AS workspace, name, max_file_bytes::text AS "maxFileBytes", allowed_types AS "allowedTypes",
  default_visibility AS "defaultVisibility", link_key AS "linkKey", link_key_version AS "linkKeyVersion",
  link_key_rotated_at AS "linkKeyRotatedAt", created_at AS "createdAt", updated_at AS "updatedAt"`;

type Raw = Omit<BucketRow, 'maxFileBytes'> & { maxFileBytes: string };

const rowOf = (r: Raw): BucketRow => ({ ...r, maxFileBytes: Number(r.maxFileBytes) });

/** storage.buckets, within one workspace. */
@Injectable()
export class BucketsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Inserts a bucket; false when the workspace already has one of that name. */
  async insert(scope: WorkspaceScope, tx: Tx | undefined, row: Omit<BucketRow, 'workspace'>): Promise<boolean> {
    const inserted = rowsOf<{ name: string }>(
      await managerOf(this.db, tx).query(
        `INSERT INTO storage.buckets (workspace_slug, name, max_file_bytes, allowed_types, default_visibility,
           link_key, link_key_version, link_key_rotated_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (workspace_slug, name) DO NOTHING RETURNING name`,
        [
          scope.workspace,
          row.name,
          row.maxFileBytes,
          row.allowedTypes,
          row.defaultVisibility,
          row.linkKey,
          row.linkKeyVersion,
          row.linkKeyRotatedAt,
          row.createdAt,
          row.updatedAt,
        ],
      ),
    );
    return inserted.length === 1;
  }

  async find(scope: WorkspaceScope, tx: Tx | undefined, name: string): Promise<BucketRow | undefined> {
    const [row] = rowsOf<Raw>(
      await managerOf(this.db, tx).query(
        `SELECT ${COLUMNS} FROM storage.buckets WHERE workspace_slug = $1 AND name = $2`,
        [scope.workspace, name],
      ),
    );
    return row && rowOf(row);
  }

  async list(scope: WorkspaceScope): Promise<BucketRow[]> {
    return rowsOf<Raw>(
      await this.db.query(`SELECT ${COLUMNS} FROM storage.buckets WHERE workspace_slug = $1 ORDER BY name`, [
        scope.workspace,
      ]),
    ).map(rowOf);
  }

  async update(
    scope: WorkspaceScope,
    name: string,
    settings: BucketSettings,
    at: Date,
  ): Promise<BucketRow | undefined> {
    const [row] = rowsOf<Raw>(
      await this.db.query(
        `UPDATE storage.buckets SET max_file_bytes = $3, allowed_types = $4, default_visibility = $5, updated_at = $6
          WHERE workspace_slug = $1 AND name = $2 RETURNING ${COLUMNS}`,
        [scope.workspace, name, settings.maxFileBytes, settings.allowedTypes, settings.defaultVisibility, at],
      ),
    );
    return row && rowOf(row);
  }

  async replaceLinkKey(
    scope: WorkspaceScope,
    name: string,
    linkKey: string,
    linkKeyVersion: number,
    at: Date,
  ): Promise<BucketRow | undefined> {
    const [row] = rowsOf<Raw>(
      await this.db.query(
        `UPDATE storage.buckets SET link_key = $3, link_key_version = $4, link_key_rotated_at = $5, updated_at = $5
          WHERE workspace_slug = $1 AND name = $2 RETURNING ${COLUMNS}`,
        [scope.workspace, name, linkKey, linkKeyVersion, at],
      ),
    );
    return row && rowOf(row);
  }
}
