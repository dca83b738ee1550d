import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Permissions scoped to collections (docs/identity.md, "Policies scoped to collections"):
 * a `records` policy may name the collections (by slug) its actions apply to. NULL, as on
 * every policy so far, means every collection. Adding a nullable column without a default
 * rewrites nothing and holds its lock for an instant.
 */
export class PolicyCollections1767400000000 implements MigrationInterface {
  name = 'PolicyCollections1767400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE iam.policies ADD COLUMN IF NOT EXISTS collections text[]');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE iam.policies DROP COLUMN IF EXISTS collections');
  }
}
