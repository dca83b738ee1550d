import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deliveries with their retry schedule (a due time claimed with SKIP LOCKED), the
 * log of attempts (which the circuit breaker reads), and open circuits per receiver.
 */
export class WebhooksDeliveries1763900000000 implements MigrationInterface {
  name = 'WebhooksDeliveries1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE webhooks.deliveries (
      id uuid PRIMARY KEY,
      workspace_slug text NOT NULL,
      subscription_id uuid NOT NULL REFERENCES webhooks.subscriptions (id),
      event_id text,
      event text NOT NULL,
      record_slug text,
      is_test boolean NOT NULL DEFAULT false,
      replayed_from uuid REFERENCES webhooks.deliveries (id),
      status text NOT NULL DEFAULT 'retrying' CHECK (status IN ('retrying', 'success', 'failed')),
      attempt_count integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      leased boolean NOT NULL DEFAULT false,
      http_status integer,
      last_error text,
      request_body text NOT NULL,
      request_headers jsonb,
      response_body text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      completed_at timestamptz
    )`);
    // One delivery per event and subscription, however often the event is redelivered.
    await q.query(
      'CREATE UNIQUE INDEX deliveries_event_idx ON webhooks.deliveries (subscription_id, event_id) WHERE event_id IS NOT NULL',
    );
    await q.query("CREATE INDEX deliveries_due_idx ON webhooks.deliveries (next_attempt_at) WHERE status = 'retrying'");
    await q.query(
      'CREATE INDEX deliveries_subscription_idx ON webhooks.deliveries (subscription_id, created_at DESC, id)',
    );
    await q.query('CREATE INDEX deliveries_workspace_idx ON webhooks.deliveries (workspace_slug, created_at DESC, id)');
    await q.query(`CREATE TABLE webhooks.delivery_attempts (
      id bigserial PRIMARY KEY,
      delivery_id uuid NOT NULL REFERENCES webhooks.deliveries (id),
      subscription_id uuid NOT NULL,
      attempt integer NOT NULL,
      receiver text,
      outcome text NOT NULL CHECK (outcome IN ('success', 'failure', 'rejected', 'interrupted')),
      http_status integer,
      error text,
      duration_ms integer,
      recorded_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query('CREATE INDEX delivery_attempts_delivery_idx ON webhooks.delivery_attempts (delivery_id, attempt)');
    // /health's last failure.
    await q.query(
      "CREATE INDEX delivery_attempts_failures_idx ON webhooks.delivery_attempts (subscription_id, recorded_at DESC) WHERE outcome <> 'success'",
    );
    // The breaker's rolling window and "time since the last request" read requests actually sent.
    await q.query(
      "CREATE INDEX delivery_attempts_receiver_idx ON webhooks.delivery_attempts (receiver, recorded_at) WHERE outcome IN ('success', 'failure')",
    );
    await q.query(`CREATE TABLE webhooks.receiver_circuits (
      receiver text PRIMARY KEY,
      opened_at timestamptz NOT NULL
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE webhooks.receiver_circuits');
    await q.query('DROP TABLE webhooks.delivery_attempts');
    await q.query('DROP TABLE webhooks.deliveries');
  }
}
