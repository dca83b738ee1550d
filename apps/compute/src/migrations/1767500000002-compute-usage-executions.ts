import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Counter rows per workspace and month: a transaction adds to the one its id names, so concurrent
 * starts rarely meet on a row, and a transaction that records several runs in several statements
 * holds one counter row, never two in an order another could cross (a deadlock).
 */
export const EXECUTION_SLOTS = 16;

/**
 * Function executions a workspace started per calendar month (UTC), against its
 * plan's `functionExecutionsPerMonth` (docs/plans.md): kept by a statement
 * trigger on compute.runs (every path that records a run: API, workers,
 * sweeps), by the month of the run's `queued_at` (the service's clock), in
 * EXECUTION_SLOTS rows per workspace and month summed on read. Runs refused by
 * a limit (`rate_limited`) did not execute and are not counted. Only inserts
 * count: run retention deletes old runs without giving executions back. Filled
 * here from the runs there are.
 */
export class ComputeUsageExecutions1767500000002 implements MigrationInterface {
  name = 'ComputeUsageExecutions1767500000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE compute.usage_executions (
      workspace_slug text NOT NULL,
      month date NOT NULL,
      slot smallint NOT NULL,
      executions bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (workspace_slug, month, slot)
    )`);
    await q.query(`CREATE FUNCTION compute.usage_runs_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO compute.usage_executions AS c (workspace_slug, month, slot, executions)
        SELECT workspace_slug, date_trunc('month', queued_at AT TIME ZONE 'UTC')::date,
               (txid_current() % ${EXECUTION_SLOTS})::smallint, count(*)
          FROM new_rows WHERE status <> 'rate_limited'
         GROUP BY 1, 2
        ON CONFLICT (workspace_slug, month, slot) DO UPDATE SET executions = c.executions + EXCLUDED.executions;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER usage_runs_inserted AFTER INSERT ON compute.runs
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION compute.usage_runs_inserted()`);
    await q.query(`INSERT INTO compute.usage_executions (workspace_slug, month, slot, executions)
      SELECT workspace_slug, date_trunc('month', queued_at AT TIME ZONE 'UTC')::date, 0, count(*)
        FROM compute.runs WHERE status <> 'rate_limited' GROUP BY 1, 2`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS usage_runs_inserted ON compute.runs`);
    await q.query(`DROP FUNCTION IF EXISTS compute.usage_runs_inserted()`);
    await q.query(`DROP TABLE IF EXISTS compute.usage_executions`);
  }
}
