import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Workspace plans (docs/plans.md): iam.plans holds each plan's limits (null:
 * unlimited) and features; every workspace names its plan. The `default` plan
 * is made here with generous limits and every feature on, and every existing
 * workspace is given it (the column's default).
 */
export class WorkspacePlans1767500000000 implements MigrationInterface {
  name = 'WorkspacePlans1767500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE iam.plans (
      name text PRIMARY KEY,
      description text NOT NULL DEFAULT '',
      limits jsonb NOT NULL,
      features jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query(`INSERT INTO iam.plans (name, description, limits, features) VALUES ('default', $1, $2, $3)`, [
      'Every workspace starts on it: generous limits, every feature on',
      JSON.stringify({
        records: 10_000_000,
        storageBytes: 50 * 1024 ** 3,
        functionExecutionsPerMonth: 10_000_000,
        functions: 1000,
        triggers: 2000,
        orchestrations: 1000,
        webhookSubscriptions: 1000,
        serviceAccounts: 200,
      }),
      JSON.stringify({ endpoints: true, inboundCapture: true, temporal: true }),
    ]);
    await q.query(
      `ALTER TABLE iam.workspaces ADD COLUMN plan_name text NOT NULL DEFAULT 'default' REFERENCES iam.plans (name)`,
    );
    await q.query(`CREATE INDEX workspaces_plan_name_idx ON iam.workspaces (plan_name)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE iam.workspaces DROP COLUMN IF EXISTS plan_name`);
    await q.query(`DROP TABLE IF EXISTS iam.plans`);
  }
}
