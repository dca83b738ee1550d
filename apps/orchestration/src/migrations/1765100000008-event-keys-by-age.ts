import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Record events' keys in event_runs are deleted by retention once the records stream
 * can no longer deliver their event again: an index to find them by age. Built
 * CONCURRENTLY (outside a transaction), so replicas still running are not locked out.
 */
export class EventKeysByAge1765100000008 implements MigrationInterface {
  name = 'EventKeysByAge1765100000008';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS event_runs_record_event_age_idx ON orchestration.event_runs (created_at)
        WHERE event_id NOT LIKE 'webhook:%'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS orchestration.event_runs_record_event_age_idx');
  }
}
