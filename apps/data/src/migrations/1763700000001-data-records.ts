import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Records, their versions and changelog, unique values, counters and the event outbox. */
export class DataRecords1763700000001 implements MigrationInterface {
  name = 'DataRecords1763700000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE data.records (
      id uuid PRIMARY KEY,
      workspace_slug text NOT NULL,
      collection_id uuid NOT NULL REFERENCES data.collections (id),
      data jsonb NOT NULL,
      metadata jsonb,
      status text NOT NULL DEFAULT 'active',
      version integer NOT NULL DEFAULT 1,
      created_by text NOT NULL,
      updated_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      deleted_at timestamptz,
      deleted_by text,
      expires_at timestamptz
    )`);
    await q.query(
      `CREATE INDEX records_collection_idx ON data.records (collection_id, created_at, id) WHERE deleted_at IS NULL`,
    );
    await q.query(
      `CREATE INDEX records_expiry_idx ON data.records (expires_at) WHERE expires_at IS NOT NULL AND deleted_at IS NULL`,
    );
    // Reference lookups (restrict / cascade / set_null, one-to-one) search data for a target id.
    await q.query(`CREATE INDEX records_data_idx ON data.records USING gin (data jsonb_path_ops)`);

    await q.query(`CREATE TABLE data.record_versions (
      record_id uuid NOT NULL REFERENCES data.records (id) ON DELETE CASCADE,
      version integer NOT NULL,
      data jsonb NOT NULL,
      changes jsonb NOT NULL,
      updated_by text NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (record_id, version)
    )`);

    await q.query(`CREATE TABLE data.record_changelog (
      id uuid PRIMARY KEY,
      record_id uuid NOT NULL REFERENCES data.records (id) ON DELETE CASCADE,
      action text NOT NULL,
      user_id text NOT NULL,
      changes jsonb NOT NULL,
      metadata jsonb,
      at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`);
    await q.query(`CREATE INDEX record_changelog_record_idx ON data.record_changelog (record_id, at)`);

    // isUnique (and one-to-one references): one row per (collection, field, value); the primary key is the guard.
    await q.query(`CREATE TABLE data.unique_values (
      collection_id uuid NOT NULL,
      field text NOT NULL,
      value text NOT NULL,
      record_id uuid NOT NULL REFERENCES data.records (id) ON DELETE CASCADE,
      PRIMARY KEY (collection_id, field, value)
    )`);
    await q.query(`CREATE INDEX unique_values_record_idx ON data.unique_values (record_id)`);

    await q.query(`CREATE TABLE data.counters (
      collection_id uuid NOT NULL,
      field text NOT NULL,
      last_value bigint NOT NULL,
      PRIMARY KEY (collection_id, field)
    )`);

    await q.query(`CREATE TABLE data.outbox (
      id uuid PRIMARY KEY,
      subject text NOT NULL,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      published_at timestamptz
    )`);
    await q.query(`CREATE INDEX outbox_pending_idx ON data.outbox (created_at) WHERE published_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['outbox', 'counters', 'unique_values', 'record_changelog', 'record_versions', 'records']) {
      await q.query(`DROP TABLE data.${table}`);
    }
  }
}
