import type { MigrationInterface, QueryRunner } from 'typeorm';

/** One run per (record event, orchestration), written in the run's own transaction: a redelivery starts nothing. */
export class EventRuns1765100000004 implements MigrationInterface {
  name = 'EventRuns1765100000004';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE orchestration.event_runs (
      event_id text NOT NULL,
      orchestration_id text NOT NULL,
      workspace_slug text NOT NULL,
      run_id text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (event_id, orchestration_id)
    )`);
    await q.query(
      `CREATE INDEX orchestrations_event_idx ON orchestration.orchestrations
         (workspace_slug, (trigger->>'eventType'), (trigger->>'structureSlug'))
        WHERE trigger->>'type' = 'event-driven'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX orchestration.orchestrations_event_idx');
    await q.query('DROP TABLE orchestration.event_runs');
  }
}
