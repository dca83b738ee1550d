import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { managerOf, type Tx, type WorkspaceScope } from '@strata/db';

export interface RecordUsage {
  readonly records: number;
  readonly storageBytes: number;
}

/**
 * data.usage_counters: a workspace's live records and stored bytes, kept by
 * triggers on data.records (migration 1767500000001) in slots summed here.
 */
@Injectable()
export class UsageRepository {
  constructor(private readonly db: DataSource) {}

  async usage(scope: WorkspaceScope, tx?: Tx): Promise<RecordUsage> {
    const [row] = await managerOf(this.db, tx).query<{ records: string; bytes: string }[]>(
      `SELECT coalesce(sum(records), 0) AS records, coalesce(sum(storage_bytes), 0) AS bytes
         FROM data.usage_counters WHERE workspace_slug = $1`,
      [scope.workspace],
    );
    return { records: Number(row!.records), storageBytes: Number(row!.bytes) };
  }

  /** Every workspace with records or counters (what the reconciliation goes over). */
  async workspaces(): Promise<string[]> {
    const rows = await this.db.query<{ workspace_slug: string }[]>(
      `SELECT workspace_slug FROM data.usage_counters UNION SELECT workspace_slug FROM data.collections`,
    );
    return rows.map((r) => r.workspace_slug);
  }

  /**
   * Recomputes the workspace's counts from its records and adds the drift to
   * its counters: both are read in one snapshot (REPEATABLE READ), so the drift
   * is exact at that instant, and writes after it add their own changes beside
   * it (additions commute). Returns the drift repaired.
   */
  async reconcile(scope: WorkspaceScope): Promise<RecordUsage> {
    const drift = await this.db.transaction('REPEATABLE READ', async (m) => {
      const [row] = await m.query<{ records: string; bytes: string }[]>(
        `SELECT (SELECT count(*) FILTER (WHERE deleted_at IS NULL) FROM data.records WHERE workspace_slug = $1)
                - (SELECT coalesce(sum(records), 0) FROM data.usage_counters WHERE workspace_slug = $1) AS records,
                (SELECT coalesce(sum(pg_column_size(data)), 0) FROM data.records WHERE workspace_slug = $1)
                - (SELECT coalesce(sum(storage_bytes), 0) FROM data.usage_counters WHERE workspace_slug = $1) AS bytes`,
        [scope.workspace],
      );
      return { records: Number(row!.records), storageBytes: Number(row!.bytes) };
    });
    if (drift.records !== 0 || drift.storageBytes !== 0) {
      await this.db.query(
        `INSERT INTO data.usage_counters AS c (workspace_slug, slot, records, storage_bytes) VALUES ($1, 0, $2, $3)
         ON CONFLICT (workspace_slug, slot) DO UPDATE
           SET records = c.records + EXCLUDED.records, storage_bytes = c.storage_bytes + EXCLUDED.storage_bytes`,
        [scope.workspace, drift.records, drift.storageBytes],
      );
    }
    return drift;
  }
}
