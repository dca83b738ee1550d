import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * orchestration.orchestrations (the current definition) and
 * orchestration.orchestration_versions (every version, kept: a run executes the
 * version it started on, whatever is edited meanwhile).
 */
export class Orchestrations1765100000000 implements MigrationInterface {
  name = 'Orchestrations1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE orchestration.orchestrations (
      id text PRIMARY KEY,
      workspace_slug text NOT NULL,
      slug text NOT NULL,
      name text NOT NULL,
      description text,
      status text NOT NULL CHECK (status IN ('draft', 'active', 'paused')),
      version integer NOT NULL,
      trigger jsonb NOT NULL,
      steps jsonb NOT NULL,
      created_by text NOT NULL,
      updated_by text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`);
    await q.query('CREATE UNIQUE INDEX orchestrations_slug_key ON orchestration.orchestrations (workspace_slug, slug)');
    await q.query(
      'CREATE INDEX orchestrations_list_idx ON orchestration.orchestrations (workspace_slug, created_at, id)',
    );
    await q.query(`CREATE TABLE orchestration.orchestration_versions (
      orchestration_id text NOT NULL REFERENCES orchestration.orchestrations (id) ON DELETE CASCADE,
      workspace_slug text NOT NULL,
      version integer NOT NULL,
      name text NOT NULL,
      status text NOT NULL,
      trigger jsonb NOT NULL,
      steps jsonb NOT NULL,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (orchestration_id, version)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE orchestration.orchestration_versions');
    await q.query('DROP TABLE orchestration.orchestrations');
  }
}
