import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The next due time of each active scheduled orchestration, claimed with SKIP LOCKED by the scheduler. */
export class Schedules1765100000005 implements MigrationInterface {
  name = 'Schedules1765100000005';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE orchestration.schedules (
      orchestration_id text PRIMARY KEY REFERENCES orchestration.orchestrations (id) ON DELETE CASCADE,
      workspace_slug text NOT NULL,
      due_at timestamptz NOT NULL
    )`);
    await q.query('CREATE INDEX schedules_due_idx ON orchestration.schedules (due_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE orchestration.schedules');
  }
}
