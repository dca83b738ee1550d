import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, type Tx, type WorkspaceScope } from '@strata/db';

/** One (event, trigger) pair as a key. */
export const pairKey = (eventId: string, triggerId: string): string => `${eventId}\u0000${triggerId}`;

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

  /** Records many pairs in one statement, in `tx`; the ones recorded now, as `pairKey`s (the others started before). */
  async claimMany(
    scope: WorkspaceScope,
    tx: Tx,
    pairs: readonly { readonly eventId: string; readonly triggerId: string; readonly runId: string }[],
    now: Date,
  ): Promise<Set<string>> {
    if (pairs.length === 0) return new Set();
    const rows = await managerOf(this.db, tx).query<{ event_id: string; trigger_id: string }[]>(
      `INSERT INTO compute.trigger_event_runs (event_id, trigger_id, workspace_slug, run_id, created_at)
       SELECT p.event_id, p.trigger_id, $1, p.run_id, $2
         FROM unnest($3::text[], $4::uuid[], $5::uuid[]) AS p(event_id, trigger_id, run_id)
       ON CONFLICT (event_id, trigger_id) DO NOTHING RETURNING event_id, trigger_id`,
      [scope.workspace, now, pairs.map((p) => p.eventId), pairs.map((p) => p.triggerId), pairs.map((p) => p.runId)],
    );
    return new Set(rows.map((r) => pairKey(r.event_id, r.trigger_id)));
  }

  /** System (every workspace): forgets pairs older than `before` (the stream no longer holds their events). */
  /** The run an (event, trigger) pair started, if it started one. */
  async runOf(scope: WorkspaceScope, eventId: string, triggerId: string): Promise<string | undefined> {
    const rows = await this.db.query<{ run_id: string }[]>(
      `SELECT run_id FROM compute.trigger_event_runs WHERE workspace_slug = $1 AND event_id = $2 AND trigger_id = $3`,
      [scope.workspace, eventId, triggerId],
    );
    return rows[0]?.run_id;
  }

  async forgetBefore(before: Date, limit: number): Promise<number> {
    const rows = await this.db.query<{ event_id: string }[]>(
      `DELETE FROM compute.trigger_event_runs WHERE ctid IN (
         SELECT ctid FROM compute.trigger_event_runs WHERE created_at < $1 LIMIT $2) RETURNING event_id`,
      [before, limit],
    );
    return rows.length;
  }
}
