import type { MigrationInterface, QueryRunner } from 'typeorm';

/** On the Temporal engine, the id of the workflow executing a run (to cancel it); null on the embedded engine. */
export class RunWorkflowIds1765100000006 implements MigrationInterface {
  name = 'RunWorkflowIds1765100000006';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE orchestration.runs ADD COLUMN workflow_id text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE orchestration.runs DROP COLUMN workflow_id');
  }
}
