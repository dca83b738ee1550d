import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Failed sign-ins per account and per client address, shared by every replica
 * (docs/identity.md, "Guessing"). A row is forgotten, and pruned, once its last
 * failure is older than the longest wait plus LOGIN_FAILURE_MEMORY_MS.
 */
export class SignInFailures1766300000000 implements MigrationInterface {
  name = 'SignInFailures1766300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE iam.sign_in_failures (
      subject text PRIMARY KEY,
      failures integer NOT NULL,
      last_failure_at timestamptz NOT NULL
    )`);
    await q.query(`CREATE INDEX sign_in_failures_last_failure_idx ON iam.sign_in_failures (last_failure_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS iam.sign_in_failures`);
  }
}
