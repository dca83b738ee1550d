import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Functions with their versions (the audit trail of every save), drafts, and
 * function runs (the truth about every execution; the job queue only carries ids).
 * Values produced by user code (logs, return values, errors) are stored as JSON
 * text, not jsonb: jsonb refuses the NUL character a function may well return.
 */
export class ComputeFunctionsRuns1764200000000 implements MigrationInterface {
  name = 'ComputeFunctionsRuns1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE compute.functions (
      id uuid PRIMARY KEY,
      workspace_slug text NOT NULL,
      name text NOT NULL,
      description text,
      code text NOT NULL,
      version integer NOT NULL,
      code_hash text NOT NULL,
      created_by text NOT NULL,
      updated_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      deleted_at timestamptz
    )`);
    await q.query(
      'CREATE UNIQUE INDEX functions_name_key ON compute.functions (workspace_slug, name) WHERE deleted_at IS NULL',
    );
    await q.query(
      'CREATE INDEX functions_workspace_idx ON compute.functions (workspace_slug, created_at, id) WHERE deleted_at IS NULL',
    );
    await q.query(`CREATE TABLE compute.function_versions (
      function_id uuid NOT NULL REFERENCES compute.functions (id),
      version integer NOT NULL,
      workspace_slug text NOT NULL,
      name text NOT NULL,
      description text,
      code text NOT NULL,
      code_hash text NOT NULL,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (function_id, version)
    )`);
    await q.query(`CREATE TABLE compute.drafts (
      id uuid PRIMARY KEY,
      workspace_slug text NOT NULL,
      resource_type text NOT NULL,
      data jsonb NOT NULL,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
    await q.query('CREATE INDEX drafts_workspace_idx ON compute.drafts (workspace_slug, created_at)');
    await q.query(`CREATE TABLE compute.runs (
      id uuid PRIMARY KEY,
      job_id uuid NOT NULL UNIQUE,
      workspace_slug text NOT NULL,
      function_id uuid REFERENCES compute.functions (id),
      function_version integer,
      function_code_hash text NOT NULL,
      code text,
      trigger_id uuid,
      execution_source text NOT NULL,
      status text NOT NULL,
      params text NOT NULL,
      params_key_version integer NOT NULL,
      execution_context jsonb NOT NULL,
      limits jsonb NOT NULL,
      worker_id text,
      lease_expires_at timestamptz,
      logs text NOT NULL DEFAULT '[]',
      logs_truncated boolean NOT NULL DEFAULT false,
      api_calls text NOT NULL DEFAULT '[]',
      return_value text,
      error text,
      memory_usage_bytes bigint,
      cpu_usage_seconds numeric(14, 6),
      queued_at timestamptz NOT NULL,
      started_at timestamptz,
      finished_at timestamptz,
      original_run_id uuid,
      is_rerun boolean NOT NULL DEFAULT false,
      rerun_count integer NOT NULL DEFAULT 0,
      rerun_by text,
      rerun_reason text,
      created_by text NOT NULL,
      CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'timed_out', 'cancelled')),
      CHECK ((function_id IS NULL) = (code IS NOT NULL))
    )`);
    await q.query('CREATE INDEX runs_workspace_idx ON compute.runs (workspace_slug, queued_at DESC, id)');
    await q.query(
      'CREATE INDEX runs_function_idx ON compute.runs (workspace_slug, function_id, queued_at DESC) WHERE function_id IS NOT NULL',
    );
    await q.query("CREATE INDEX runs_lease_idx ON compute.runs (lease_expires_at) WHERE status = 'running'");
    await q.query("CREATE INDEX runs_queued_idx ON compute.runs (queued_at) WHERE status = 'queued'");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE compute.runs');
    await q.query('DROP TABLE compute.drafts');
    await q.query('DROP TABLE compute.function_versions');
    await q.query('DROP TABLE compute.functions');
  }
}
