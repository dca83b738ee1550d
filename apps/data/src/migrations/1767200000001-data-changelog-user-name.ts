import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A changelog entry keeps the name of whoever made the change (a user's name or email, a
 * service account's name) as it was then. Nullable, no default: adding it rewrites nothing,
 * and entries written before it answer their principal id as before.
 */
export class DataChangelogUserName1767200000001 implements MigrationInterface {
  name = 'DataChangelogUserName1767200000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE data.record_changelog ADD COLUMN IF NOT EXISTS user_name text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE data.record_changelog DROP COLUMN IF EXISTS user_name');
  }
}
