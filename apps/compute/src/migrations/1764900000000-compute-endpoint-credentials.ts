import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The credentials of endpoint triggers, apart from the trigger rows (whose
 * metadata is copied into every version): an API key's SHA-256 only, and an
 * HMAC signing secret sealed with the key ring (it must be read back to verify).
 */
export class ComputeEndpointCredentials1764900000000 implements MigrationInterface {
  name = 'ComputeEndpointCredentials1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE compute.endpoint_credentials (
      trigger_id uuid PRIMARY KEY REFERENCES compute.triggers (id) ON DELETE CASCADE,
      workspace_slug text NOT NULL,
      api_key_hash text,
      api_key_last4 text,
      api_key_created_at timestamptz,
      signing_secret text,
      signing_secret_key_version integer,
      signing_secret_created_at timestamptz,
      CHECK ((api_key_hash IS NULL) = (api_key_created_at IS NULL)),
      CHECK ((signing_secret IS NULL) = (signing_secret_created_at IS NULL))
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE compute.endpoint_credentials');
  }
}
