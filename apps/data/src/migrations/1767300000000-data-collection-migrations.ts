import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Collection migrations (docs/data.md, "Migrations"): one row per job, the truth about its
 * progress (the runner that holds it may die: the next one goes on from `cursor`), and one row
 * per record the job changed (its values before, for cancel), could not convert (why), or had
 * to leave for later (a client held it locked).
 */
export class DataCollectionMigrations1767300000000 implements MigrationInterface {
  name = 'DataCollectionMigrations1767300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE data.collection_migrations (
      id uuid PRIMARY KEY,
      workspace_slug text NOT NULL,
      collection_id uuid NOT NULL REFERENCES data.collections (id),
      status text NOT NULL,
      phase text NOT NULL DEFAULT 'scan',
      fields jsonb NOT NULL,
      from_properties jsonb NOT NULL,
      to_properties jsonb NOT NULL,
      cursor uuid,
      total integer NOT NULL,
      processed integer NOT NULL DEFAULT 0,
      converted integer NOT NULL DEFAULT 0,
      already_valid integer NOT NULL DEFAULT 0,
      failed integer NOT NULL DEFAULT 0,
      revert_processed integer NOT NULL DEFAULT 0,
      reverted integer NOT NULL DEFAULT 0,
      revert_failed integer NOT NULL DEFAULT 0,
      batches integer NOT NULL DEFAULT 0,
      created_by text NOT NULL,
      cancelled_by text,
      error text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      finished_at timestamptz,
      progress_event_at timestamptz
    )`);
    await q.query(
      `CREATE INDEX collection_migrations_collection_idx ON data.collection_migrations (workspace_slug, collection_id, created_at)`,
    );
    await q.query(
      `CREATE INDEX collection_migrations_active_idx ON data.collection_migrations (created_at) WHERE finished_at IS NULL`,
    );
    await q.query(`CREATE TABLE data.collection_migration_records (
      migration_id uuid NOT NULL REFERENCES data.collection_migrations (id) ON DELETE CASCADE,
      record_id uuid NOT NULL,
      pending boolean NOT NULL DEFAULT false,
      before jsonb,
      failures jsonb,
      revert_failures jsonb,
      PRIMARY KEY (migration_id, record_id)
    )`);
    await q.query(
      `CREATE INDEX collection_migration_records_pending_idx ON data.collection_migration_records (migration_id, record_id)
        WHERE pending`,
    );
    await q.query(
      `CREATE INDEX collection_migration_records_failed_idx ON data.collection_migration_records (migration_id, record_id)
        WHERE failures IS NOT NULL OR revert_failures IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE data.collection_migration_records');
    await q.query('DROP TABLE data.collection_migrations');
  }
}
