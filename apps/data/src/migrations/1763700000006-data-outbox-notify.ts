import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A NOTIFY on channel `data_outbox` when outbox rows are written (delivered at
 * commit, once per transaction), so relays publish at once instead of at their
 * next poll.
 */
export class DataOutboxNotify1763700000006 implements MigrationInterface {
  name = 'DataOutboxNotify1763700000006';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE FUNCTION data.notify_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_notify('data_outbox', ''); RETURN NULL; END $$`);
    await q.query(
      'CREATE TRIGGER outbox_notify AFTER INSERT ON data.outbox FOR EACH STATEMENT EXECUTE FUNCTION data.notify_outbox()',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER outbox_notify ON data.outbox');
    await q.query('DROP FUNCTION data.notify_outbox()');
  }
}
