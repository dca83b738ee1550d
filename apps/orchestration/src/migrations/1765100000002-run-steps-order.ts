import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Run steps keep the order they were written in (steps of one claim share a timestamp). */
export class RunStepsOrder1765100000002 implements MigrationInterface {
  name = 'RunStepsOrder1765100000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE orchestration.run_steps ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY');
    await q.query('DROP INDEX orchestration.run_steps_run_idx');
    await q.query('CREATE INDEX run_steps_run_idx ON orchestration.run_steps (run_id, seq)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX orchestration.run_steps_run_idx');
    await q.query('ALTER TABLE orchestration.run_steps DROP COLUMN seq');
    await q.query('CREATE INDEX run_steps_run_idx ON orchestration.run_steps (run_id, started_at, id)');
  }
}
