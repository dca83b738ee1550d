import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One row per (record event, trigger) that started a run, written in the run's own
 * transaction: a redelivered event or a restarted consumer finds it and starts
 * nothing again. Rows older than the record stream keeps events are useless and
 * are swept.
 */
export class ComputeTriggerEventRuns1764500000000 implements MigrationInterface {
  name = 'ComputeTriggerEventRuns1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE compute.trigger_event_runs (
      event_id text NOT NULL,
      trigger_id uuid NOT NULL,
      workspace_slug text NOT NULL,
      run_id uuid NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (event_id, trigger_id)
    )`);
    await q.query('CREATE INDEX trigger_event_runs_age_idx ON compute.trigger_event_runs (created_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE compute.trigger_event_runs');
  }
}
