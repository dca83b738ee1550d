import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What became of an arrival's auto-persist: `pending` (to be asked), `attempted`
 * (asked; no answer recorded: a crash, never retried), `succeeded` with the
 * record's id, `failed` with the reason, `skipped` (the trigger did not persist).
 */
export class InboundAutoPersist1765000000001 implements MigrationInterface {
  name = 'InboundAutoPersist1765000000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE inbound.inbound_events
      ADD COLUMN persist_status text CHECK (persist_status IN ('pending', 'attempted', 'succeeded', 'failed', 'skipped')),
      ADD COLUMN persisted_record_id uuid,
      ADD COLUMN persist_error text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE inbound.inbound_events
      DROP COLUMN persist_status, DROP COLUMN persisted_record_id, DROP COLUMN persist_error`);
  }
}
