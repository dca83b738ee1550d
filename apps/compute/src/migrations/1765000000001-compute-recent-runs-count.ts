import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The lane of a job is decided by how many runs its workspace queued recently,
 * read from `runs_workspace_idx (workspace_slug, queued_at DESC, id)`; the index
 * of queued runs by workspace that counted the runs still waiting (which made a
 * workspace delayed by others look heavy) goes, and with it an index entry per run.
 */
export class ComputeRecentRunsCount1765000000001 implements MigrationInterface {
  name = 'ComputeRecentRunsCount1765000000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS compute.runs_queued_workspace_idx');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("CREATE INDEX runs_queued_workspace_idx ON compute.runs (workspace_slug) WHERE status = 'queued'");
  }
}
