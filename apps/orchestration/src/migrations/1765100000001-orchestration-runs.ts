import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Runs and run steps of the embedded engine. A run is claimed by its due time
 * (`due_at`, FOR UPDATE SKIP LOCKED) by any replica: pending, a delay's end, a
 * compute step's next poll or retry.
 */
export class OrchestrationRuns1765100000001 implements MigrationInterface {
  name = 'OrchestrationRuns1765100000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE orchestration.runs (
      id text PRIMARY KEY,
      workspace_slug text NOT NULL,
      orchestration_id text NOT NULL,
      orchestration_version integer NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'running', 'waiting', 'completed', 'failed')),
      current_step_id text,
      current_attempt integer NOT NULL DEFAULT 1,
      input jsonb NOT NULL,
      context jsonb NOT NULL,
      step_outputs jsonb NOT NULL,
      correlation_id text,
      trigger_type text NOT NULL,
      trigger_metadata jsonb NOT NULL,
      has_errors boolean NOT NULL DEFAULT false,
      delay_step_count integer NOT NULL DEFAULT 0,
      failure_reason text,
      executed_steps jsonb NOT NULL DEFAULT '[]',
      errors jsonb NOT NULL DEFAULT '[]',
      due_at timestamptz,
      created_at timestamptz NOT NULL,
      started_at timestamptz,
      completed_at timestamptz,
      ttl_expires_at timestamptz
    )`);
    await q.query(
      'CREATE INDEX runs_list_idx ON orchestration.runs (workspace_slug, orchestration_id, created_at DESC, id DESC)',
    );
    await q.query(
      `CREATE INDEX runs_due_idx ON orchestration.runs (due_at) WHERE status IN ('pending', 'running', 'waiting')`,
    );
    await q.query(`CREATE TABLE orchestration.run_steps (
      id text PRIMARY KEY,
      workspace_slug text NOT NULL,
      run_id text NOT NULL REFERENCES orchestration.runs (id) ON DELETE CASCADE,
      step_id text NOT NULL,
      step_type text NOT NULL,
      attempt integer NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'running', 'waiting', 'succeeded', 'failed')),
      input jsonb,
      output jsonb,
      decision_result jsonb,
      delay_config jsonb,
      error jsonb,
      function_id uuid,
      function_run_id uuid,
      execution_id uuid,
      started_at timestamptz NOT NULL,
      completed_at timestamptz
    )`);
    await q.query('CREATE INDEX run_steps_run_idx ON orchestration.run_steps (run_id, started_at, id)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE orchestration.run_steps');
    await q.query('DROP TABLE orchestration.runs');
  }
}
