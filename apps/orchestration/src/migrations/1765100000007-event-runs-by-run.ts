import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which event started a run is deleted with the run by retention (it was kept for
 * good before): an index to find a run's rows, and the rows of runs already gone.
 */
export class EventRunsByRun1765100000007 implements MigrationInterface {
  name = 'EventRunsByRun1765100000007';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX event_runs_run_idx ON orchestration.event_runs (run_id)');
    await q.query(
      `DELETE FROM orchestration.event_runs e
        WHERE NOT EXISTS (SELECT 1 FROM orchestration.runs r WHERE r.id = e.run_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX orchestration.event_runs_run_idx');
  }
}
