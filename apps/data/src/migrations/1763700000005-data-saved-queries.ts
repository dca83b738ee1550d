import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Saved queries: named canonical definitions with typed variables. */
export class DataSavedQueries1763700000005 implements MigrationInterface {
  name = 'DataSavedQueries1763700000005';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE data.saved_queries (
      id uuid PRIMARY KEY,
      workspace_slug text NOT NULL,
      resource text NOT NULL,
      name text NOT NULL,
      description text,
      definition jsonb NOT NULL,
      variables jsonb NOT NULL DEFAULT '{}',
      legacy_placeholders boolean NOT NULL DEFAULT false,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT saved_queries_name_key UNIQUE (workspace_slug, resource, name)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE data.saved_queries');
  }
}
