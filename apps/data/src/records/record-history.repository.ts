import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ErrorCode } from '@strata/contracts';
import { managerOf, type Tx, type WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';

export interface VersionRow {
  version: number;
  data: Record<string, unknown>;
  changes: Record<string, { old: unknown; new: unknown }>;
  updated_by: string;
  updated_at: Date;
}

export interface ChangelogRow {
  id: string;
  record_id: string;
  action: string;
  user_id: string;
  at: Date;
  changes: Record<string, { old: unknown; new: unknown }>;
  metadata: Record<string, unknown> | null;
}

export interface ChangelogWindow {
  readonly startDate?: string | undefined;
  readonly endDate?: string | undefined;
  readonly limit: number;
}

/**
 * A record's versions (data.record_versions) and changelog
 * (data.record_changelog). Neither table has a workspace column: every read
 * joins the record row and requires the scope's workspace on it, in the same
 * statement.
 */
@Injectable()
export class RecordHistoryRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async versions(scope: WorkspaceScope, recordId: string): Promise<VersionRow[]> {
    return this.db.query<VersionRow[]>(
      `SELECT v.version, v.data, v.changes, v.updated_by, v.updated_at
         FROM data.record_versions v JOIN data.records r ON r.id = v.record_id
        WHERE r.workspace_slug = $1 AND v.record_id = $2 ORDER BY v.version`,
      [scope.workspace, recordId],
    );
  }

  /** One version of a record; 404 when the record has no such version. */
  async version(scope: WorkspaceScope, recordId: string, version: number, tx?: Tx): Promise<VersionRow> {
    const rows = await managerOf(this.db, tx).query<VersionRow[]>(
      `SELECT v.version, v.data, v.changes, v.updated_by, v.updated_at
         FROM data.record_versions v JOIN data.records r ON r.id = v.record_id
        WHERE r.workspace_slug = $1 AND v.record_id = $2 AND v.version = $3`,
      [scope.workspace, recordId, version],
    );
    if (!rows[0]) {
      throw StrataException.notFound(`Version ${version} of record ${recordId} not found`, ErrorCode.RECORD_NOT_FOUND);
    }
    return rows[0];
  }

  async changelog(scope: WorkspaceScope, recordId: string, window: ChangelogWindow): Promise<ChangelogRow[]> {
    return this.db.query<ChangelogRow[]>(
      `SELECT l.id, l.record_id, l.action, l.user_id, l.at, l.changes, l.metadata
         FROM data.record_changelog l JOIN data.records r ON r.id = l.record_id
        WHERE r.workspace_slug = $1 AND l.record_id = $2
          AND ($3::timestamptz IS NULL OR l.at >= $3) AND ($4::timestamptz IS NULL OR l.at <= $4)
        ORDER BY l.at DESC LIMIT $5`,
      [scope.workspace, recordId, window.startDate ?? null, window.endDate ?? null, window.limit],
    );
  }
}
