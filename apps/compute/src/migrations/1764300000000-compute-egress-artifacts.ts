import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The domains a workspace's functions may call with `api.fetch` / `api.httpPost`,
 * and the JSON documents functions keep with `api.storeAsJSON` (sealed with the
 * key ring, kept until `expires_at`).
 */
export class ComputeEgressArtifacts1764300000000 implements MigrationInterface {
  name = 'ComputeEgressArtifacts1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE compute.allowed_domains (
      workspace_slug text NOT NULL,
      domain text NOT NULL,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (workspace_slug, domain)
    )`);
    await q.query(`CREATE TABLE compute.run_documents (
      id uuid PRIMARY KEY,
      workspace_slug text NOT NULL,
      run_id uuid NOT NULL REFERENCES compute.runs (id) ON DELETE CASCADE,
      name text NOT NULL,
      content text NOT NULL,
      size_bytes integer NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )`);
    await q.query('CREATE INDEX run_documents_run_idx ON compute.run_documents (workspace_slug, run_id, created_at)');
    await q.query('CREATE INDEX run_documents_expiry_idx ON compute.run_documents (expires_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE compute.run_documents');
    await q.query('DROP TABLE compute.allowed_domains');
  }
}
