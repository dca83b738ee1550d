import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { rowsOf } from '@strata/db';

/** Where a walk of the changelog by `(at, id)` stands: the last entry it read (`at` as PostgreSQL writes it, to the microsecond). */
export interface ChangelogCursor {
  readonly at: string;
  readonly id: string;
}

export const CHANGELOG_START: ChangelogCursor = { at: '-infinity', id: '00000000-0000-0000-0000-000000000000' };

/**
 * What the records' retention deletes across every workspace (the rows' age decides,
 * not a request; each row's workspace is its own, nothing crosses over). Each statement
 * picks its rows `FOR UPDATE SKIP LOCKED`: sweepers on several replicas share them and
 * never wait on each other or on a request holding one.
 */
@Injectable()
export class RecordRetentionRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Up to `limit` Idempotency-Keys stored before `before`; how many went. */
  async deleteIdempotencyKeys(before: Date, limit: number): Promise<number> {
    const rows = rowsOf<{ key: string }>(
      await this.db.query(
        `DELETE FROM data.idempotency_keys WHERE (workspace_slug, key) IN (
           SELECT workspace_slug, key FROM data.idempotency_keys WHERE created_at < $1
            ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING key`,
        [before, limit],
      ),
    );
    return rows.length;
  }

  /**
   * Reads the next `limit` changelog entries older than `before` after `after` (in `(at, id)`
   * order) and deletes those the platform's window governs: of a live record of a collection
   * whose `retentionPolicy` has no `maxAgeDays` (the collection sweep applies that one). The
   * others (a deleted record's, kept whole while it can be restored) are read and kept.
   * Answers how many went, how many were read, and where the walk stands.
   */
  async deleteChangelogPage(
    before: Date,
    after: ChangelogCursor,
    limit: number,
  ): Promise<{ deleted: number; read: number; last: ChangelogCursor | undefined }> {
    const [page] = await this.db.query<
      { deleted: number; read: number; last_at: string | null; last_id: string | null }[]
    >(
      `WITH page AS (
         SELECT l.id, l.at,
                r.deleted_at IS NULL AND jsonb_typeof(c.retention_policy -> 'maxAgeDays') IS DISTINCT FROM 'number' AS due
           FROM data.record_changelog l
           JOIN data.records r ON r.id = l.record_id
           JOIN data.collections c ON c.id = r.collection_id
          WHERE l.at < $1 AND (l.at, l.id) > ($2::timestamptz, $3::uuid)
          ORDER BY l.at, l.id LIMIT $4
          FOR UPDATE OF l SKIP LOCKED),
       gone AS (DELETE FROM data.record_changelog d USING page p WHERE d.id = p.id AND p.due RETURNING d.id),
       last AS (SELECT at, id FROM page ORDER BY at DESC, id DESC LIMIT 1)
       SELECT (SELECT count(*) FROM gone)::int AS deleted, (SELECT count(*) FROM page)::int AS read,
              (SELECT at::text FROM last) AS last_at, (SELECT id::text FROM last) AS last_id`,
      [before, after.at, after.id, limit],
    );
    return {
      deleted: page?.deleted ?? 0,
      read: page?.read ?? 0,
      last: page?.last_at && page.last_id ? { at: page.last_at, id: page.last_id } : undefined,
    };
  }

  /**
   * Up to `limit` records deleted (soft: by DELETE, a bulk delete, a cascade or TTL) before
   * `before`, removed for good with their versions, changelog and unique values (cascades);
   * how many went. A record restored meanwhile is not deleted any more, so not taken.
   */
  async purgeDeleted(before: Date, limit: number): Promise<number> {
    const rows = rowsOf<{ id: string }>(
      await this.db.query(
        `DELETE FROM data.records WHERE id IN (
           SELECT id FROM data.records WHERE deleted_at < $1
            ORDER BY deleted_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING id`,
        [before, limit],
      ),
    );
    return rows.length;
  }
}
