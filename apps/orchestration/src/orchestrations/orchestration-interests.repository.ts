import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { lockEventInterest, managerOf, type Tx, type WorkspaceScope } from '@strata/db';
import type { EventInterest } from '@strata/contracts';

/** The consumer name the orchestration service routes record events by (docs/events.md, "Routed events"). */
export const ORCHESTRATION_EVENT_CONSUMER = 'orchestration';

const INTERESTS = `SELECT DISTINCT workspace_slug AS "workspaceSlug", trigger->>'structureSlug' AS "recordSlug"
  FROM orchestration.orchestrations
 WHERE status = 'active' AND trigger->>'type' = 'event-driven' AND trigger->>'structureSlug' IS NOT NULL`;

/**
 * What record events the orchestrations need: the collection of every active
 * event-driven orchestration; and the advisory locks their changes take.
 */
@Injectable()
export class OrchestrationInterestsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  lock(tx: Tx, mode: 'change' | 'settled', scope: WorkspaceScope): Promise<void> {
    return lockEventInterest(this.db, tx, ORCHESTRATION_EVENT_CONSUMER, mode, scope.workspace);
  }

  lockAll(tx: Tx): Promise<void> {
    return lockEventInterest(this.db, tx, ORCHESTRATION_EVENT_CONSUMER, 'all');
  }

  ofWorkspace(scope: WorkspaceScope, tx: Tx): Promise<EventInterest[]> {
    return managerOf(this.db, tx).query<EventInterest[]>(`${INTERESTS} AND workspace_slug = $1`, [scope.workspace]);
  }

  /** Of every workspace: the whole set, at start. */
  ofEveryWorkspace(tx: Tx): Promise<EventInterest[]> {
    return managerOf(this.db, tx).query<EventInterest[]>(INTERESTS);
  }
}
