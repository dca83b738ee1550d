import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, rowsOf, type Tx, type WorkspaceScope } from '@strata/db';

/** A purge the sweep took. */
export interface DuePurge {
  readonly objectKey: string;
  readonly attempts: number;
}

/**
 * storage.purges: bytes to remove. A deleted file's bytes (due at once), and every
 * upload's guard: written before its first byte, due once the upload would count as
 * abandoned, and deleted in the transaction that writes the file's row, so the bytes
 * of an upload that never committed (a crash mid-stream) are removed by the sweep.
 */
@Injectable()
export class PurgesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The guard of an upload about to write `objectKey`. */
  async guardUpload(scope: WorkspaceScope, objectKey: string, dueAt: Date, now: Date): Promise<void> {
    await this.db.query(
      `INSERT INTO storage.purges (object_key, workspace_slug, reason, not_before, created_at)
       VALUES ($1, $2, 'upload', $3, $4)`,
      [objectKey, scope.workspace, dueAt, now],
    );
  }

  /** Removes an upload's guard once its row is written (in that transaction); whether it was still there. */
  async releaseUpload(scope: WorkspaceScope, tx: Tx | undefined, objectKey: string): Promise<boolean> {
    const rows = rowsOf<{ object_key: string }>(
      await managerOf(this.db, tx).query(
        `DELETE FROM storage.purges WHERE workspace_slug = $1 AND object_key = $2 AND reason = 'upload'
          RETURNING object_key`,
        [scope.workspace, objectKey],
      ),
    );
    return rows.length === 1;
  }

  /** The bytes of `objectKey` are to go, from `dueAt` on. */
  async schedule(scope: WorkspaceScope, tx: Tx | undefined, objectKey: string, dueAt: Date): Promise<void> {
    await managerOf(this.db, tx).query(
      `INSERT INTO storage.purges (object_key, workspace_slug, reason, not_before, created_at)
       VALUES ($1, $2, 'deleted', $3, $3)
       ON CONFLICT (object_key) DO UPDATE SET reason = 'deleted', not_before = LEAST(storage.purges.not_before, $3)`,
      [objectKey, scope.workspace, dueAt],
    );
  }

  /**
   * System-wide, for the sweep: takes up to `limit` purges due at `now` (rows another
   * replica holds are skipped), runs `purge` on each inside the transaction that
   * locks them, deletes those done and moves the others to `retryAt(attempts)`.
   */
  async processDue(
    now: Date,
    limit: number,
    purge: (objectKey: string) => Promise<void>,
    retryAt: (attempts: number) => Date,
  ): Promise<{ purged: number; failed: number }> {
    return this.db.transaction(async (manager) => {
      const due = rowsOf<DuePurge>(
        await manager.query(
          `SELECT object_key AS "objectKey", attempts FROM storage.purges
            WHERE not_before <= $1 ORDER BY not_before LIMIT $2 FOR UPDATE SKIP LOCKED`,
          [now, limit],
        ),
      );
      let purged = 0;
      let failed = 0;
      for (const p of due) {
        try {
          await purge(p.objectKey);
          await manager.query('DELETE FROM storage.purges WHERE object_key = $1', [p.objectKey]);
          purged++;
        } catch (err) {
          failed++;
          await manager.query(
            'UPDATE storage.purges SET attempts = attempts + 1, not_before = $2, last_error = $3 WHERE object_key = $1',
            [p.objectKey, retryAt(p.attempts + 1), String(err).slice(0, 500)],
          );
        }
      }
      return { purged, failed };
    });
  }

  /** For tests and readiness: the purges left of a workspace. */
  async pending(scope: WorkspaceScope): Promise<number> {
    const [row] = rowsOf<{ n: number }>(
      await this.db.query('SELECT count(*)::int AS n FROM storage.purges WHERE workspace_slug = $1', [scope.workspace]),
    );
    return row?.n ?? 0;
  }
}
