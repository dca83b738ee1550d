import type { MigrationInterface, QueryRunner } from 'typeorm';

/** A run the executions limit refused is recorded as `rate_limited`, never silently dropped. */
export class ComputeRateLimitedRuns1764800000000 implements MigrationInterface {
  name = 'ComputeRateLimitedRuns1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE compute.runs DROP CONSTRAINT runs_status_check,
      ADD CONSTRAINT runs_status_check
        CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'timed_out', 'cancelled', 'rate_limited'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE compute.runs DROP CONSTRAINT runs_status_check,
      ADD CONSTRAINT runs_status_check
        CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'timed_out', 'cancelled'))`);
  }
}
