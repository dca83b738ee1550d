import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retention (docs/compute.md, "Retention"): finished runs are deleted some days after they
 * ended, oldest first; an index finds them. Partial: a run enters it only when it ends, in
 * the update that ends it (not a HOT update already: its status is in other indexes), so
 * queuing a run writes no more index entries than before. Built without locking out the
 * writes of replicas and workers still running (CONCURRENTLY, so outside a transaction).
 */
export class ComputeRunsRetention1766400002000 implements MigrationInterface {
  name = 'ComputeRunsRetention1766400002000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS runs_finished_idx ON compute.runs (finished_at)
        WHERE finished_at IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS compute.runs_finished_idx');
  }
}
