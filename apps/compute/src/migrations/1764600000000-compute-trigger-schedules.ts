import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The next due time of each live, unpaused scheduled trigger. The scheduler claims
 * due rows with FOR UPDATE SKIP LOCKED and, in the same transaction, queues the run
 * and moves the row to the next due time: any number of replicas fire each
 * occurrence once.
 */
export class ComputeTriggerSchedules1764600000000 implements MigrationInterface {
  name = 'ComputeTriggerSchedules1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE compute.trigger_schedules (
      trigger_id uuid PRIMARY KEY REFERENCES compute.triggers (id),
      workspace_slug text NOT NULL,
      due_at timestamptz NOT NULL
    )`);
    await q.query('CREATE INDEX trigger_schedules_due_idx ON compute.trigger_schedules (due_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE compute.trigger_schedules');
  }
}
