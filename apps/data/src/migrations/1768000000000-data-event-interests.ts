import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which record-event consumer has a reason to handle which workspace's events
 * (docs/events.md, "Routed events"): the outbox relay reads it in the statement
 * that takes a batch, and publishes a routed copy of each event to every
 * consumer interested in its workspace and collection (`*`: every collection).
 */
export class DataEventInterests1768000000000 implements MigrationInterface {
  name = 'DataEventInterests1768000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE data.event_interests (
      consumer text NOT NULL CHECK (consumer ~ '^[a-z][a-z0-9_]{0,39}$'),
      workspace_slug text NOT NULL,
      record_slug text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (consumer, workspace_slug, record_slug))`);
    await q.query('CREATE INDEX event_interests_by_collection ON data.event_interests (workspace_slug, record_slug)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE data.event_interests');
  }
}
