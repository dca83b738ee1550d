import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { lockEventInterest, managerOf, type Tx, type WorkspaceScope } from '@strata/db';
import type { EventInterest } from '@strata/contracts';

/** The consumer name compute routes record events by (docs/events.md, "Routed events"). */
export const COMPUTE_EVENT_CONSUMER = 'compute';

const INTERESTS = `SELECT DISTINCT workspace_slug AS "workspaceSlug", metadata->>'recordSlug' AS "recordSlug"
  FROM compute.triggers
 WHERE execution_type = 'event-driven' AND NOT paused AND deleted_at IS NULL AND metadata->>'recordSlug' IS NOT NULL`;

/**
 * What record events the event-driven triggers need: the collection of every
 * live, unpaused one; and the advisory locks their changes take.
 */
@Injectable()
export class TriggerInterestsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  lock(tx: Tx, mode: 'change' | 'settled', scope: WorkspaceScope): Promise<void> {
    return lockEventInterest(this.db, tx, COMPUTE_EVENT_CONSUMER, mode, scope.workspace);
  }

  lockAll(tx: Tx): Promise<void> {
    return lockEventInterest(this.db, tx, COMPUTE_EVENT_CONSUMER, 'all');
  }

  ofWorkspace(scope: WorkspaceScope, tx: Tx): Promise<EventInterest[]> {
    return managerOf(this.db, tx).query<EventInterest[]>(`${INTERESTS} AND workspace_slug = $1`, [scope.workspace]);
  }

  /** Of every workspace: the whole set, at start. */
  ofEveryWorkspace(tx: Tx): Promise<EventInterest[]> {
    return managerOf(this.db, tx).query<EventInterest[]>(INTERESTS);
  }
}
