import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outbox rows live until they are published: the relay deletes a batch in the
 * transaction that publishes it, so the table holds only pending events (no
 * marked rows to prune, no growing index of them to step over). Events already
 * published are deleted here; JetStream keeps them.
 *
 * Drops the NOTIFY at outbox writes (1763700000006): PostgreSQL takes one
 * database-wide lock to commit a notifying transaction, so every record write
 * queued behind the others' commits, and write throughput fell by a third. The
 * replica that writes an event now wakes its own relay after commit.
 */
export class DataOutboxDeleteOnPublish1763700000007 implements MigrationInterface {
  name = 'DataOutboxDeleteOnPublish1763700000007';

  async up(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER IF EXISTS outbox_notify ON data.outbox');
    await q.query('DROP FUNCTION IF EXISTS data.notify_outbox()');
    await q.query('DELETE FROM data.outbox WHERE published_at IS NOT NULL');
    await q.query('DROP INDEX data.outbox_pending_idx');
    await q.query('ALTER TABLE data.outbox DROP COLUMN published_at');
    await q.query('CREATE INDEX outbox_order_idx ON data.outbox (created_at, id)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX data.outbox_order_idx');
    await q.query('ALTER TABLE data.outbox ADD COLUMN published_at timestamptz');
    await q.query(`CREATE INDEX outbox_pending_idx ON data.outbox (created_at) WHERE published_at IS NULL`);
    await q.query(`CREATE FUNCTION data.notify_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_notify('data_outbox', ''); RETURN NULL; END $$`);
    await q.query(
      'CREATE TRIGGER outbox_notify AFTER INSERT ON data.outbox FOR EACH STATEMENT EXECUTE FUNCTION data.notify_outbox()',
    );
  }
}
