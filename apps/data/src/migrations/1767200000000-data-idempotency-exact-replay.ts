import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An Idempotency-Key replay answers the first response byte for byte: `jsonb` reorders an
 * object's keys (by length, then bytes), so the response is also kept as `json`, which keeps
 * its text as written. A new nullable column (no rewrite, no lock beyond a moment's); rows
 * written before it replay from `response` as before.
 */
export class DataIdempotencyExactReplay1767200000000 implements MigrationInterface {
  name = 'DataIdempotencyExactReplay1767200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE data.idempotency_keys ADD COLUMN IF NOT EXISTS response_exact json');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE data.idempotency_keys DROP COLUMN IF EXISTS response_exact');
  }
}
