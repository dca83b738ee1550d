import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ErrorCode, type RetentionPolicy } from '@strata/contracts';
import { managerOf, rowsOf, type Tx, type WorkspaceScope } from '@strata/db';
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
  /** The actor's name when the entry was written; null for entries written before names were kept. */
  user_name: string | null;
  at: Date;
  changes: Record<string, { old: unknown; new: unknown }>;
  metadata: Record<string, unknown> | null;
}

/** A live collection with a retention policy, as the retention sweep reads it. */
export interface RetentionTarget {
  collection_id: string;
  workspace_slug: string;
  retention_policy: RetentionPolicy;
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

  /**
   * Live collections of every workspace that have a retention policy, for the retention
   * sweep, which then prunes each within its own workspace.
   */
  async retentionTargets(): Promise<RetentionTarget[]> {
    return this.db.query<RetentionTarget[]>(
      `SELECT id AS collection_id, workspace_slug, retention_policy FROM data.collections
        WHERE retention_policy IS NOT NULL AND deleted_at IS NULL ORDER BY id`,
    );
  }

  /**
   * Takes the collection's retention sweep for this transaction; false when another replica
   * holds it (that replica is pruning the collection now).
   */
  async lockRetention(tx: Tx, collectionId: string): Promise<boolean> {
    const rows = await managerOf(this.db, tx).query<{ locked: boolean }[]>(
      `SELECT pg_try_advisory_xact_lock(hashtext('data-retention:' || $1)) AS locked`,
      [collectionId],
    );
    return rows[0]?.locked === true;
  }

  /**
   * Deletes up to `limit` stored versions of the collection's live records that its policy no
   * longer keeps: those beyond the newest `maxVersions` stored ones (ranked by version: the
   * numbers have gaps where no version was kept), and those updated before `olderThan`. A
   * record's current version is always kept; a soft-deleted record's versions wait for it to
   * come back or go for good. Returns how many went.
   */
  async pruneVersions(
    scope: WorkspaceScope,
    tx: Tx,
    collectionId: string,
    policy: { maxVersions: number | null; olderThan: Date | null },
    limit: number,
  ): Promise<number> {
    const rows = rowsOf<{ record_id: string }>(
      await managerOf(this.db, tx).query(
        `DELETE FROM data.record_versions d
          WHERE (d.record_id, d.version) IN (
            SELECT ranked.record_id, ranked.version FROM (
              SELECT v.record_id, v.version, v.updated_at, r.version AS current,
                     row_number() OVER (PARTITION BY v.record_id ORDER BY v.version DESC) AS newest
                FROM data.record_versions v JOIN data.records r ON r.id = v.record_id
               WHERE r.workspace_slug = $1 AND r.collection_id = $2 AND r.deleted_at IS NULL
            ) ranked
            WHERE ranked.version <> ranked.current
              AND (($3::int IS NOT NULL AND ranked.newest > $3::int)
                   OR ($4::timestamptz IS NOT NULL AND ranked.updated_at < $4::timestamptz))
            LIMIT $5)
          RETURNING d.record_id`,
        [scope.workspace, collectionId, policy.maxVersions, policy.olderThan, limit],
      ),
    );
    return rows.length;
  }

  /**
   * Deletes up to `limit` changelog entries of the collection's live records written before
   * `olderThan` (its policy's `maxAgeDays`); a soft-deleted record's changelog waits, as its
   * versions do. Returns how many went.
   */
  async pruneChangelog(
    scope: WorkspaceScope,
    tx: Tx,
    collectionId: string,
    olderThan: Date,
    limit: number,
  ): Promise<number> {
    const rows = rowsOf<{ id: string }>(
      await managerOf(this.db, tx).query(
        `DELETE FROM data.record_changelog d WHERE d.id IN (
           SELECT l.id FROM data.record_changelog l JOIN data.records r ON r.id = l.record_id
            WHERE r.workspace_slug = $1 AND r.collection_id = $2 AND r.deleted_at IS NULL AND l.at < $3
            LIMIT $4 FOR UPDATE OF l SKIP LOCKED)
         RETURNING d.id`,
        [scope.workspace, collectionId, olderThan, limit],
      ),
    );
    return rows.length;
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
      `SELECT l.id, l.record_id, l.action, l.user_id, l.user_name, l.at, l.changes, l.metadata
         FROM data.record_changelog l JOIN data.records r ON r.id = l.record_id
        WHERE r.workspace_slug = $1 AND l.record_id = $2
          AND ($3::timestamptz IS NULL OR l.at >= $3) AND ($4::timestamptz IS NULL OR l.at <= $4)
        ORDER BY l.at DESC LIMIT $5`,
      [scope.workspace, recordId, window.startDate ?? null, window.endDate ?? null, window.limit],
    );
  }
}
