import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { lockEventInterest, managerOf, type Tx, type WorkspaceScope } from '@strata/db';
import { EVERY_COLLECTION, type EventInterest } from '@strata/contracts';

/** The consumer name the webhooks service routes record events by (docs/events.md, "Routed events"). */
export const WEBHOOKS_EVENT_CONSUMER = 'webhooks';

const INTERESTS = `SELECT DISTINCT workspace_slug AS "workspaceSlug", unnest(COALESCE(record_slugs, ARRAY['${EVERY_COLLECTION}'])) AS "recordSlug"
  FROM webhooks.subscriptions WHERE active AND deleted_at IS NULL`;

/**
 * What record events the subscriptions need: every collection a live, active
 * subscription names (`*` for one naming none), and the advisory locks its
 * changes take (`lockEventInterest`).
 */
@Injectable()
export class SubscriptionInterestsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  lock(tx: Tx, mode: 'change' | 'settled', scope: WorkspaceScope): Promise<void> {
    return lockEventInterest(this.db, tx, WEBHOOKS_EVENT_CONSUMER, mode, scope.workspace);
  }

  lockAll(tx: Tx): Promise<void> {
    return lockEventInterest(this.db, tx, WEBHOOKS_EVENT_CONSUMER, 'all');
  }

  ofWorkspace(scope: WorkspaceScope, tx: Tx): Promise<EventInterest[]> {
    return managerOf(this.db, tx).query<EventInterest[]>(`${INTERESTS} AND workspace_slug = $1`, [scope.workspace]);
  }

  /** Of every workspace: the whole set, at start. */
  ofEveryWorkspace(tx: Tx): Promise<EventInterest[]> {
    return managerOf(this.db, tx).query<EventInterest[]>(INTERESTS);
  }
}
