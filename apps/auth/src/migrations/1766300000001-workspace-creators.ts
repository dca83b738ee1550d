import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Workspace creation counts against a per-user quota (WORKSPACE_QUOTA_PER_USER): the count
 * reads the workspaces by `created_by`, which every row has had since the first migration
 * (the creating user's id, NOT NULL), so there is nothing to fill in, only an index to add.
 */
export class WorkspaceCreators1766300000001 implements MigrationInterface {
  name = 'WorkspaceCreators1766300000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX workspaces_created_by_idx ON iam.workspaces (created_by)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS iam.workspaces_created_by_idx`);
  }
}
