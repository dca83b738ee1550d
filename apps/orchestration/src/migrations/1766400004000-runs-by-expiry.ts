import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retention deletes finished runs once their `ttl_expires_at` passed, oldest first: it read
 * the whole runs table every minute on every replica with the engine. An index finds them
 * (partial: a run enters it when it ends, in the update that ends it, not a HOT update
 * already since its status is in another index's predicate). Built without locking out the
 * writes of replicas still running (CONCURRENTLY, so outside a transaction).
 */
export class RunsByExpiry1766400004000 implements MigrationInterface {
  name = 'RunsByExpiry1766400004000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS runs_expiry_idx ON orchestration.runs (ttl_expires_at)
        WHERE ttl_expires_at IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS orchestration.runs_expiry_idx');
  }
}
