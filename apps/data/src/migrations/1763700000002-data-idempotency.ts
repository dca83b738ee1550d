import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Responses kept for Idempotency-Key replays. */
export class DataIdempotency1763700000002 implements MigrationInterface {
  name = 'DataIdempotency1763700000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE data.idempotency_keys (
      workspace_slug text NOT NULL,
      key text NOT NULL,
      request_hash text NOT NULL,
      status integer NOT NULL,
      response jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_slug, key)
    )`);
    await q.query(`CREATE INDEX idempotency_keys_created_idx ON data.idempotency_keys (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE data.idempotency_keys');
  }
}
