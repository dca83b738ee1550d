import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Webhook subscriptions (secrets as key-ring envelopes) and the Idempotency-Key of their creation. */
export class WebhooksSubscriptions1763800000000 implements MigrationInterface {
  name = 'WebhooksSubscriptions1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE webhooks.subscriptions (
      id uuid PRIMARY KEY,
      workspace_slug text NOT NULL,
      name text NOT NULL,
      url text NOT NULL,
      events text[] NOT NULL,
      record_slugs text[],
      active boolean NOT NULL DEFAULT true,
      secret text NOT NULL,
      previous_secret text,
      previous_secret_valid_until timestamptz,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      deleted_at timestamptz
    )`);
    await q.query(
      'CREATE INDEX subscriptions_workspace_idx ON webhooks.subscriptions (workspace_slug, created_at, id) WHERE deleted_at IS NULL',
    );
    await q.query(`CREATE TABLE webhooks.idempotency_keys (
      workspace_slug text NOT NULL,
      key text NOT NULL,
      request_hash text NOT NULL,
      subscription_id uuid NOT NULL REFERENCES webhooks.subscriptions (id),
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_slug, key)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE webhooks.idempotency_keys');
    await q.query('DROP TABLE webhooks.subscriptions');
  }
}
