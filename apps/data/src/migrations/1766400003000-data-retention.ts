import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retention (docs/data.md, "Retention"): changelog entries go by age (`at`, walked in
 * `(at, id)` order so a pass reads the entries it keeps once), and records deleted long
 * enough ago go for good (partial: a record enters it when it is deleted, in an update that
 * is not HOT already, since `deleted_at` is in other indexes' predicates). Built without
 * locking out the writes of replicas still running (CONCURRENTLY, so outside a transaction).
 */
export class DataRetention1766400003000 implements MigrationInterface {
  name = 'DataRetention1766400003000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX CONCURRENTLY IF NOT EXISTS record_changelog_at_idx ON data.record_changelog (at, id)');
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS records_deleted_idx ON data.records (deleted_at)
        WHERE deleted_at IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS data.records_deleted_idx');
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS data.record_changelog_at_idx');
  }
}
