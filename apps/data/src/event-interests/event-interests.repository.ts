import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, type Tx } from '@strata/db';
import type { EventInterest } from '@strata/contracts';

/**
 * data.event_interests: which consumer wants which workspace's record events.
 * Like the outbox relay, it serves the platform's own services, never a caller's
 * tenant data: a consumer names the workspaces it has subscriptions, triggers
 * or orchestrations in, and rows hold only those names.
 */
@Injectable()
export class EventInterestsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Inserts the interests the consumer does not have yet. */
  async add(tx: Tx, consumer: string, interests: readonly EventInterest[]): Promise<void> {
    if (interests.length === 0) return;
    await managerOf(this.db, tx).query(
      `INSERT INTO data.event_interests (consumer, workspace_slug, record_slug)
       SELECT $1, w, r FROM unnest($2::text[], $3::text[]) AS i(w, r)
       ON CONFLICT DO NOTHING`,
      [consumer, interests.map((i) => i.workspaceSlug), interests.map((i) => i.recordSlug)],
    );
  }

  /** The consumer's interests in `workspace` (every workspace when undefined) become exactly `interests`. */
  async replace(
    tx: Tx,
    consumer: string,
    workspace: string | undefined,
    interests: readonly EventInterest[],
  ): Promise<void> {
    const manager = managerOf(this.db, tx);
    await manager.query(
      `DELETE FROM data.event_interests e
        WHERE e.consumer = $1 AND ($2::text IS NULL OR e.workspace_slug = $2)
          AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::text[]) AS i(w, r)
                           WHERE i.w = e.workspace_slug AND i.r = e.record_slug)`,
      [consumer, workspace ?? null, interests.map((i) => i.workspaceSlug), interests.map((i) => i.recordSlug)],
    );
    await this.add(tx, consumer, interests);
  }
}
