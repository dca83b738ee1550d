import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How many runs a workspace has waiting decides which work queue its next job
 * joins (docs/compute.md, "Fair share"). The count stops at a few dozen, read
 * from this index of queued runs alone: no finished run is ever looked at.
 */
export class ComputeQueuedRunsByWorkspace1765000000000 implements MigrationInterface {
  name = 'ComputeQueuedRunsByWorkspace1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE INDEX runs_queued_workspace_idx ON compute.runs (workspace_slug) WHERE status = 'queued'");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX compute.runs_queued_workspace_idx');
  }
}
