import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Re-run history is read by the original run's id. */
export class ComputeRerunIndex1764700000000 implements MigrationInterface {
  name = 'ComputeRerunIndex1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE INDEX runs_original_idx ON compute.runs (workspace_slug, original_run_id) WHERE original_run_id IS NOT NULL',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX compute.runs_original_idx');
  }
}
