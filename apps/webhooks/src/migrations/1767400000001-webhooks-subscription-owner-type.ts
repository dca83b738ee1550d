import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A subscription delivers a collection's events only while its owner (the principal
 * that created it) may list that collection's records (docs/webhooks.md). `created_by`
 * has always held the owner's id; this records its type. Existing rows get theirs from
 * the id's form (a service account's client id starts `ci_`, a user's id is a uuid), as
 * the service also does for a row written without it.
 */
export class WebhooksSubscriptionOwnerType1767400000001 implements MigrationInterface {
  name = 'WebhooksSubscriptionOwnerType1767400000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE webhooks.subscriptions ADD COLUMN IF NOT EXISTS created_by_type text');
    await q.query(
      `UPDATE webhooks.subscriptions
          SET created_by_type = CASE WHEN created_by LIKE 'ci\\_%' THEN 'service_account' ELSE 'user' END
        WHERE created_by_type IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE webhooks.subscriptions DROP COLUMN IF EXISTS created_by_type');
  }
}
