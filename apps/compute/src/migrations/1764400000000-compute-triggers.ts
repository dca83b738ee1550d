import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Triggers and their versions. A workspace's system default trigger (test runs go
 * through it) is a row with `is_system`; it cannot be updated or deleted. Runs
 * name their trigger. Encrypted parameters are stored sealed inside `metadata`.
 */
export class ComputeTriggers1764400000000 implements MigrationInterface {
  name = 'ComputeTriggers1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE compute.triggers (
      id uuid PRIMARY KEY,
      workspace_slug text NOT NULL,
      name text NOT NULL,
      description text,
      function_id uuid REFERENCES compute.functions (id),
      execution_type text NOT NULL,
      metadata jsonb NOT NULL,
      version integer NOT NULL,
      is_system boolean NOT NULL DEFAULT false,
      paused boolean NOT NULL DEFAULT false,
      created_by text NOT NULL,
      updated_by text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz,
      CHECK (execution_type IN ('on-demand', 'event-driven', 'scheduled', 'http-trigger', 'endpoint')),
      CHECK (is_system OR function_id IS NOT NULL)
    )`);
    await q.query(
      'CREATE UNIQUE INDEX triggers_name_key ON compute.triggers (workspace_slug, name) WHERE deleted_at IS NULL',
    );
    await q.query('CREATE UNIQUE INDEX triggers_system_key ON compute.triggers (workspace_slug) WHERE is_system');
    // Paths address triggers from outside ({data_base}/endpoints/{path}, /http-trigger/{path}): one per workspace and type.
    await q.query(
      `CREATE UNIQUE INDEX triggers_path_key ON compute.triggers (workspace_slug, execution_type, (metadata->>'path'))
        WHERE deleted_at IS NULL AND execution_type IN ('endpoint', 'http-trigger')`,
    );
    await q.query(
      `CREATE INDEX triggers_workspace_idx ON compute.triggers (workspace_slug, created_at, id) WHERE deleted_at IS NULL`,
    );
    await q.query(
      'CREATE INDEX triggers_function_idx ON compute.triggers (workspace_slug, function_id) WHERE deleted_at IS NULL',
    );
    await q.query(`CREATE TABLE compute.trigger_versions (
      trigger_id uuid NOT NULL REFERENCES compute.triggers (id),
      version integer NOT NULL,
      workspace_slug text NOT NULL,
      name text NOT NULL,
      description text,
      function_id uuid,
      metadata jsonb NOT NULL,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (trigger_id, version)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE compute.trigger_versions');
    await q.query('DROP TABLE compute.triggers');
  }
}
