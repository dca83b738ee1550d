import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The webhook deliveries' keys in event_runs (`webhook:<id>`) are deleted with their runs
 * by retention: an index to find a run's keys. Built without locking out the writes of
 * replicas still running (CONCURRENTLY, so outside a transaction); a record event's key is
 * kept as before (its redeliveries may come long after its run expired).
 */
export class EventRunsByRun1765100000007 implements MigrationInterface {
  name = 'EventRunsByRun1765100000007';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS event_runs_webhook_run_idx ON orchestration.event_runs (run_id)
        WHERE event_id LIKE 'webhook:%'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS orchestration.event_runs_webhook_run_idx');
  }
}
