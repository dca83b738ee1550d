import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The storage schema: buckets (limits, allowed types, the sealed signed-link key),
 * files (a row only once its bytes are in place), pending purges of bytes (deleted
 * files, abandoned uploads) and the answers kept for `Idempotency-Key` (docs/storage.md).
 */
export class StorageFiles1768500000000 implements MigrationInterface {
  name = 'StorageFiles1768500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE storage.buckets (
      workspace_slug text NOT NULL,
      name text NOT NULL,
      max_file_bytes bigint NOT NULL CHECK (max_file_bytes > 0),
      allowed_types text[] NOT NULL,
      default_visibility text NOT NULL CHECK (default_visibility IN ('private', 'public')),
      link_key text NOT NULL,
      link_key_version integer NOT NULL,
      link_key_rotated_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (workspace_slug, name)
    )`);
    await q.query(`CREATE TABLE storage.files (
      id uuid PRIMARY KEY,
      workspace_slug text NOT NULL,
      bucket text NOT NULL,
      name text NOT NULL,
      size bigint NOT NULL,
      content_type text NOT NULL,
      sha256 text NOT NULL,
      visibility text NOT NULL CHECK (visibility IN ('private', 'public')),
      metadata jsonb NOT NULL,
      link_collection text,
      link_record_id text,
      status text NOT NULL CHECK (status IN ('ready')),
      object_key text NOT NULL UNIQUE,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      FOREIGN KEY (workspace_slug, bucket) REFERENCES storage.buckets (workspace_slug, name)
    )`);
    await q.query('CREATE UNIQUE INDEX files_name_idx ON storage.files (workspace_slug, bucket, name)');
    await q.query('CREATE INDEX files_created_idx ON storage.files (workspace_slug, created_at, id)');
    await q.query(
      `CREATE INDEX files_link_idx ON storage.files (workspace_slug, link_collection, link_record_id)
        WHERE link_collection IS NOT NULL`,
    );
    await q.query(`CREATE TABLE storage.purges (
      object_key text PRIMARY KEY,
      workspace_slug text NOT NULL,
      reason text NOT NULL CHECK (reason IN ('deleted', 'upload')),
      not_before timestamptz NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      last_error text,
      created_at timestamptz NOT NULL
    )`);
    await q.query('CREATE INDEX purges_due_idx ON storage.purges (not_before)');
    await q.query(`CREATE TABLE storage.idempotency_keys (
      workspace_slug text NOT NULL,
      key text NOT NULL,
      request_hash text NOT NULL,
      status integer NOT NULL,
      response json NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_slug, key)
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE storage.idempotency_keys');
    await q.query('DROP TABLE storage.purges');
    await q.query('DROP TABLE storage.files');
    await q.query('DROP TABLE storage.buckets');
  }
}
