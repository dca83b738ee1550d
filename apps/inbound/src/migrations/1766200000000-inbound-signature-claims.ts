import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Plain HMAC-SHA256 arrivals carry no timestamp and no delivery id: the same request
 * sent again verifies forever. A verified one claims its signature (the SHA-256 of the
 * verified MAC, per trigger) in the statement that stores it, for
 * INBOUND_HMAC_REPLAY_WINDOW_S; a copy within the window finds the claim and is answered
 * with the first arrival. Claims past their `expires_at` are taken over by the next
 * arrival with the same signature, and deleted by the sweep (by `expires_at`, in batches).
 */
export class InboundSignatureClaims1766200000000 implements MigrationInterface {
  name = 'InboundSignatureClaims1766200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE inbound.signature_claims (
      workspace_slug text NOT NULL,
      trigger_id uuid NOT NULL,
      signature_key text NOT NULL,
      inbound_event_id text NOT NULL,
      claimed_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (workspace_slug, trigger_id, signature_key)
    )`);
    await q.query('CREATE INDEX signature_claims_expiry_idx ON inbound.signature_claims (expires_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE inbound.signature_claims');
  }
}
