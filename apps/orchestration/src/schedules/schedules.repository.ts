import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, type Tx, type WorkspaceScope } from '@strata/db';

/** orchestration.schedules: one due time per active scheduled orchestration. */
@Injectable()
export class SchedulesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Sets the orchestration's next due time in `tx`, or takes it off the list (null). */
  async set(scope: WorkspaceScope, tx: Tx, orchestrationId: string, due: Date | null): Promise<void> {
    const manager = managerOf(this.db, tx);
    if (due === null) {
      await manager.query('DELETE FROM orchestration.schedules WHERE workspace_slug = $1 AND orchestration_id = $2', [
        scope.workspace,
        orchestrationId,
      ]);
      return;
    }
    await manager.query(
      `INSERT INTO orchestration.schedules (orchestration_id, workspace_slug, due_at) VALUES ($1, $2, $3)
       ON CONFLICT (orchestration_id) DO UPDATE SET due_at = EXCLUDED.due_at`,
      [orchestrationId, scope.workspace, due],
    );
  }

  /** System-wide, for the scheduler: due rows locked FOR UPDATE SKIP LOCKED in `tx`. */
  claimDue(tx: Tx, now: Date, limit: number) {
    return managerOf(this.db, tx).query<{ orchestration_id: string; workspace_slug: string; due_at: Date }[]>(
      `SELECT orchestration_id, workspace_slug, due_at FROM orchestration.schedules
        WHERE due_at <= $1 ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [now, limit],
    );
  }
}
