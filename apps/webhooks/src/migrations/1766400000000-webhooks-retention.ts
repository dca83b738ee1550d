import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retention (docs/webhooks.md, "Retention"): finished deliveries are deleted, with their
 * attempts, some days after they finished, and Idempotency-Keys once past their window.
 * Indexes find them by age; built without locking out the writes of replicas still
 * running (CONCURRENTLY, so outside a transaction).
 *
 * A replay names the delivery it replayed (`replayed_from`), which retention may delete
 * first (it is older): the foreign key goes, so the replay keeps naming it (a GET of that
 * id answers 404 once it is gone), as an arrival keeps naming a run compute deleted.
 */
export class WebhooksRetention1766400000000 implements MigrationInterface {
  name = 'WebhooksRetention1766400000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS deliveries_completed_idx ON webhooks.deliveries (completed_at)
        WHERE completed_at IS NOT NULL`,
    );
    await q.query(
      'CREATE INDEX CONCURRENTLY IF NOT EXISTS idempotency_keys_created_idx ON webhooks.idempotency_keys (created_at)',
    );
    await q.query('ALTER TABLE webhooks.deliveries DROP CONSTRAINT IF EXISTS deliveries_replayed_from_fkey');
  }

  async down(q: QueryRunner): Promise<void> {
    // Replays of deliveries retention deleted name nothing any more.
    await q.query(
      `UPDATE webhooks.deliveries r SET replayed_from = NULL
        WHERE r.replayed_from IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM webhooks.deliveries o WHERE o.id = r.replayed_from)`,
    );
    await q.query(
      `ALTER TABLE webhooks.deliveries ADD CONSTRAINT deliveries_replayed_from_fkey
        FOREIGN KEY (replayed_from) REFERENCES webhooks.deliveries (id)`,
    );
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS webhooks.idempotency_keys_created_idx');
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS webhooks.deliveries_completed_idx');
  }
}
