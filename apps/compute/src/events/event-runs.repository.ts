import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, type Tx, type WorkspaceScope } from '@strata/db';

/** compute.trigger_event_runs: which (event, trigger) pairs have started their run. */
@Injectable()
export class EventRunsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Records that `eventId` starts `runId` for `triggerId`, in `tx`; false when it already did. */
  async claim(
    scope: WorkspaceScope,
    tx: Tx,
    eventId: string,
    triggerId: string,
    runId: string,
    now: Date,
  ): Promise<boolean> {
    const rows = await managerOf(this.db, tx).query<{ run_id: string }[]>(
      `INSERT INTO compute.trigger_event_runs (event_id, trigger_id, workspace_slug, run_id, created_at)
       VALUES ($2, $3, $1, $4, $5) ON CONFLICT (event_id, trigger_id) DO NOTHING RETURNING run_id`,
      [scope.workspace, eventId, triggerId, runId, now],
    );
    return rows.length > 0;
  }

  /** System (every workspace): forgets pairs older than `before` (the stream no longer holds their events). */
  async forgetBefore(before: Date, limit: number): Promise<number> {
    const rows = await this.db.query<{ event_id: string }[]>(
      `DELETE FROM compute.trigger_event_runs WHERE ctid IN (
         SELECT ctid FROM compute.trigger_event_runs WHERE created_at < $1 LIMIT $2) RETURNING event_id`,
      [before, limit],
    );
    return rows.length;
  }
}
