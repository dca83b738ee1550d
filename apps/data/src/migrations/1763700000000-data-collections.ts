import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Collections (structures): one row each, property definitions as JSON. */
export class DataCollections1763700000000 implements MigrationInterface {
  name = 'DataCollections1763700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE data.collections (
      id uuid PRIMARY KEY,
      workspace_slug text NOT NULL,
      record_slug text NOT NULL,
      name text NOT NULL,
      description text,
      properties jsonb NOT NULL DEFAULT '[]',
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
      schema_discovery_mode text NOT NULL DEFAULT 'strict'
        CHECK (schema_discovery_mode IN ('strict', 'auto-evolving', 'schemaless')),
      schema_discovery_config jsonb NOT NULL,
      enable_versioning boolean NOT NULL DEFAULT false,
      retention_policy jsonb,
      default_search_field text,
      tags text[] NOT NULL DEFAULT '{}',
      metadata jsonb NOT NULL,
      created_by text NOT NULL,
      last_updated_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      deleted_at timestamptz
    )`);
    // A slug is unique among the workspace's live collections; a deleted one frees it.
    await q.query(
      `CREATE UNIQUE INDEX collections_slug_key ON data.collections (workspace_slug, record_slug) WHERE deleted_at IS NULL`,
    );
    await q.query(`CREATE INDEX collections_workspace_idx ON data.collections (workspace_slug, created_at, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE data.collections');
  }
}
