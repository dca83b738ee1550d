import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, queryPrepared, type Tx, type WorkspaceScope } from '@strata/db';
import type { RecordEvent } from '@strata/contracts';

/** An event as the outbox stores it: its id (the message id on the stream), subject and payload. */
export type OutboxRow = {
  readonly id: string;
  readonly subject: string;
  readonly payload: RecordEvent;
};

/** A pending event as the relay takes it: the payload as the JSON text it was stored as. */
export interface PendingEvent {
  readonly id: string;
  readonly subject: string;
  readonly payload: string;
  readonly created_at: Date;
  /** The consumers interested in the event's workspace and collection when the batch was taken (docs/events.md). */
  readonly consumers: string[];
}

/**
 * data.outbox. An event is written in the transaction of the change it tells
 * about, for the workspace the change was in; the relay takes pending events
 * of every workspace (it publishes, it never reads tenant data for a caller).
 */
@Injectable()
export class OutboxRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async add(scope: WorkspaceScope, tx: Tx, row: OutboxRow): Promise<void> {
    if (row.payload.workspaceSlug !== scope.workspace) {
      throw new Error(`an event of workspace ${row.payload.workspaceSlug} written in the scope of ${scope.workspace}`);
    }
    await managerOf(this.db, tx).query('INSERT INTO data.outbox (id, subject, payload) VALUES ($1, $2, $3)', [
      row.id,
      row.subject,
      row.payload,
    ]);
  }

  /**
   * Deletes and returns the oldest pending events (at most `limit`) in the
   * relay's transaction, skipping rows another replica holds: they are gone
   * only if the transaction commits, after every publish was acknowledged.
   *
   * Each event comes with the consumers interested in its workspace and
   * collection (data.event_interests), read by the same statement, so in the
   * same snapshot as the rows: an event whose write committed after an interest
   * did is routed to it (docs/events.md, "Routed events"). The workspace and
   * collection are the subject's last tokens but one
   * (`<p>.records.<workspace>.<recordSlug>.<event>`; neither holds a dot).
   */
  async take(tx: Tx, limit: number): Promise<PendingEvent[]> {
    const rows = await queryPrepared<PendingEvent>(
      managerOf(this.db, tx),
      `WITH taken AS (
         DELETE FROM data.outbox WHERE id IN (SELECT id FROM data.outbox ORDER BY created_at, id
           LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING id, subject, payload::text AS payload, created_at)
       SELECT t.id, t.subject, t.payload, t.created_at,
              ARRAY(SELECT DISTINCT i.consumer FROM data.event_interests i
                     WHERE i.workspace_slug = split_part(t.subject, '.', -3)
                       AND i.record_slug IN (split_part(t.subject, '.', -2), '*')
                     ORDER BY 1) AS consumers
         FROM taken t`,
      [limit],
    );
    return rows.sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a.id.localeCompare(b.id));
  }
}
