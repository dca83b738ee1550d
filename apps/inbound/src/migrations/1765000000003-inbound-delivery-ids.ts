import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A verified Standard Webhooks arrival keeps its `webhook-id` (`delivery_id`),
 * unique per trigger: a provider that sends the same delivery again (its retry
 * after a lost answer, signed anew) finds the arrival it sent first instead of
 * capturing, and running, a second one. The index names no column a dispatch
 * updates, so recording a dispatch stays a HOT update.
 */
export class InboundDeliveryIds1765000000003 implements MigrationInterface {
  name = 'InboundDeliveryIds1765000000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE inbound.inbound_events ADD COLUMN delivery_id text');
    await q.query(
      `CREATE UNIQUE INDEX inbound_events_delivery_idx ON inbound.inbound_events (workspace_slug, trigger_id, delivery_id)
        WHERE delivery_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX inbound.inbound_events_delivery_idx');
    await q.query('ALTER TABLE inbound.inbound_events DROP COLUMN delivery_id');
  }
}
