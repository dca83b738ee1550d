import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A verified plain HMAC-SHA256 webhook request claims its signature in event_runs
 * (`hmac-sha256:<SHA-256 of the MAC>`) for ORCHESTRATION_HMAC_REPLAY_WINDOW_S only: such a
 * request has no timestamp or delivery id, so the claim cannot be kept forever (a
 * sender may send the same body again one day) and must not grow without bound. Its
 * end is `expires_at` (null for every other key), past which the next request with the
 * signature takes the key over, and the retention pass deletes it (by `expires_at`).
 * Run outside a transaction: the index is built CONCURRENTLY, so replicas still running
 * are not locked out (adding a nullable column without a default is a catalog change).
 */
export class EventClaimExpiry1766200000001 implements MigrationInterface {
  name = 'EventClaimExpiry1766200000001';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE orchestration.event_runs ADD COLUMN IF NOT EXISTS expires_at timestamptz');
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS event_runs_expiry_idx ON orchestration.event_runs (expires_at)
        WHERE expires_at IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS orchestration.event_runs_expiry_idx');
    // The claims with an end would be kept forever as record events' keys: they go with the column.
    await q.query('DELETE FROM orchestration.event_runs WHERE expires_at IS NOT NULL');
    await q.query('ALTER TABLE orchestration.event_runs DROP COLUMN IF EXISTS expires_at');
  }
}
