import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, type Tx, type WorkspaceScope } from '@strata/db';

/** compute.trigger_schedules: the next due time of each running scheduled trigger. */
@Injectable()
export class SchedulesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Sets (or, with null, removes) the trigger's next due time, in `tx`. */
  async set(scope: WorkspaceScope, tx: Tx | undefined, triggerId: string, dueAt: Date | null): Promise<void> {
    const db = managerOf(this.db, tx);
    if (dueAt === null) {
      await db.query('DELETE FROM compute.trigger_schedules WHERE workspace_slug = $1 AND trigger_id = $2', [
        scope.workspace,
        triggerId,
      ]);
      return;
    }
    await db.query(
      `INSERT INTO compute.trigger_schedules (trigger_id, workspace_slug, due_at)
       SELECT t.id, t.workspace_slug, $3 FROM compute.triggers t WHERE t.workspace_slug = $1 AND t.id = $2
       ON CONFLICT (trigger_id) DO UPDATE SET due_at = EXCLUDED.due_at`,
      [scope.workspace, triggerId, dueAt],
    );
  }

  /** Removes the due times of every trigger of a function (it was deleted), in `tx`. */
  async removeOfFunction(scope: WorkspaceScope, tx: Tx, functionId: string): Promise<void> {
    await managerOf(this.db, tx).query(
      `DELETE FROM compute.trigger_schedules s USING compute.triggers t
        WHERE s.trigger_id = t.id AND t.workspace_slug = $1 AND t.function_id = $2`,
      [scope.workspace, functionId],
    );
  }

  /** System (every workspace): up to `limit` due rows, locked in `tx` (rows other replicas hold are skipped). */
  async claimDue(
    tx: Tx,
    now: Date,
    limit: number,
  ): Promise<{ trigger_id: string; workspace_slug: string; due_at: Date }[]> {
    return managerOf(this.db, tx).query(
      `SELECT trigger_id, workspace_slug, due_at FROM compute.trigger_schedules
        WHERE due_at <= $1 ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [now, limit],
    );
  }
}
