import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retention (docs/identity.md, "Retention"): a login's chosen workspace is deleted once its
 * grant is gone, oldest first; an index finds the oldest. Built without locking out the
 * logins of replicas still running (CONCURRENTLY, so outside a transaction). Expired OIDC
 * payloads are found by the `expires_at` index the table has had from the start.
 */
export class OidcRetention1766400001000 implements MigrationInterface {
  name = 'OidcRetention1766400001000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE INDEX CONCURRENTLY IF NOT EXISTS login_workspaces_created_idx ON iam.login_workspaces (created_at)',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS iam.login_workspaces_created_idx');
  }
}
