import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Circuit breakers per workspace and receiver origin instead of per origin: the
 * attempt log records the workspace (the breaker's window counts one
 * workspace's requests), and an open circuit is a row per workspace and origin.
 *
 * Up: a circuit open for an origin stays open for each workspace that sent
 * requests to it from the rolling window before the opening on (the traffic
 * that opened it, and whoever sent since); other workspaces start closed.
 * Down: one circuit per origin again, open since the earliest opening of any
 * workspace's circuit to it.
 */
export class WebhooksBreakerPerWorkspace1764000000000 implements MigrationInterface {
  name = 'WebhooksBreakerPerWorkspace1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE webhooks.delivery_attempts ADD COLUMN workspace_slug text');
    await q.query(
      `UPDATE webhooks.delivery_attempts a SET workspace_slug = d.workspace_slug
         FROM webhooks.deliveries d WHERE d.id = a.delivery_id`,
    );
    await q.query('ALTER TABLE webhooks.delivery_attempts ALTER COLUMN workspace_slug SET NOT NULL');

    await q.query('ALTER TABLE webhooks.receiver_circuits ADD COLUMN workspace_slug text');
    await q.query('ALTER TABLE webhooks.receiver_circuits DROP CONSTRAINT receiver_circuits_pkey');
    await q.query(
      `INSERT INTO webhooks.receiver_circuits (workspace_slug, receiver, opened_at)
       SELECT DISTINCT a.workspace_slug, c.receiver, c.opened_at
         FROM webhooks.receiver_circuits c
         JOIN webhooks.delivery_attempts a ON a.receiver = c.receiver AND a.outcome IN ('success', 'failure')
              AND a.recorded_at > c.opened_at - interval '10 seconds'
        WHERE c.workspace_slug IS NULL`,
    );
    await q.query('DELETE FROM webhooks.receiver_circuits WHERE workspace_slug IS NULL');
    await q.query('ALTER TABLE webhooks.receiver_circuits ALTER COLUMN workspace_slug SET NOT NULL');
    await q.query('ALTER TABLE webhooks.receiver_circuits ADD PRIMARY KEY (workspace_slug, receiver)');

    // The breaker's rolling window and "time since the last request" read one workspace's requests to one receiver.
    await q.query('DROP INDEX webhooks.delivery_attempts_receiver_idx');
    await q.query(
      `CREATE INDEX delivery_attempts_breaker_idx ON webhooks.delivery_attempts (workspace_slug, receiver, recorded_at)
        WHERE outcome IN ('success', 'failure')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX webhooks.delivery_attempts_breaker_idx');
    await q.query(
      `CREATE INDEX delivery_attempts_receiver_idx ON webhooks.delivery_attempts (receiver, recorded_at)
        WHERE outcome IN ('success', 'failure')`,
    );

    await q.query('ALTER TABLE webhooks.receiver_circuits DROP CONSTRAINT receiver_circuits_pkey');
    await q.query(
      `DELETE FROM webhooks.receiver_circuits c USING webhooks.receiver_circuits earlier
        WHERE earlier.receiver = c.receiver
          AND (earlier.opened_at, earlier.workspace_slug) < (c.opened_at, c.workspace_slug)`,
    );
    await q.query('ALTER TABLE webhooks.receiver_circuits DROP COLUMN workspace_slug');
    await q.query('ALTER TABLE webhooks.receiver_circuits ADD PRIMARY KEY (receiver)');

    await q.query('ALTER TABLE webhooks.delivery_attempts DROP COLUMN workspace_slug');
  }
}
