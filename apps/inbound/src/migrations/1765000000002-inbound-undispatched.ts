import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Arrivals still to be dispatched (`received` or `queued`) are listed in a
 * table of their own, written with the arrival and emptied as its dispatch
 * ends, instead of a partial index on `dispatch_status`. With no index naming
 * `dispatch_status` (and room left on each page), recording a dispatch is a
 * HOT update: the row's new version goes on its page and no index of the table
 * is written again (a partial index's predicate column ruled that out, so every
 * dispatch inserted into all four indexes). The sweep reads this small table
 * instead of walking arrivals by age.
 */
export class InboundUndispatched1765000000002 implements MigrationInterface {
  name = 'InboundUndispatched1765000000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE inbound.undispatched_events (
      id text PRIMARY KEY,
      workspace_slug text NOT NULL,
      received_at timestamptz NOT NULL
    )`);
    await q.query(`INSERT INTO inbound.undispatched_events (id, workspace_slug, received_at)
      SELECT id, workspace_slug, received_at FROM inbound.inbound_events
       WHERE dispatch_status IN ('received', 'queued')`);
    await q.query('DROP INDEX inbound.inbound_events_received_idx');
    await q.query('ALTER TABLE inbound.inbound_events SET (fillfactor = 70)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE inbound.inbound_events RESET (fillfactor)');
    await q.query(
      `CREATE INDEX inbound_events_received_idx ON inbound.inbound_events (received_at)
        WHERE dispatch_status = 'received'`,
    );
    await q.query('DROP TABLE inbound.undispatched_events');
  }
}
