import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Properties proposed by schema discovery, one row per (collection, field). */
export class DataSchemaSuggestions1763700000003 implements MigrationInterface {
  name = 'DataSchemaSuggestions1763700000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE data.schema_suggestions (
      id uuid PRIMARY KEY,
      collection_id uuid NOT NULL REFERENCES data.collections (id),
      field text NOT NULL,
      property jsonb NOT NULL,
      sample text,
      occurrences integer NOT NULL DEFAULT 1,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected')),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      decided_by text,
      decided_at timestamptz,
      CONSTRAINT schema_suggestions_field_key UNIQUE (collection_id, field)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE data.schema_suggestions');
  }
}
