import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A run of a function is written only while the function is live. Deleting a
 * function cancels its queued runs in its transaction; a run written at the
 * same time (an execute, a re-run, a dispatch racing the delete) used to land
 * after that cancellation and run the deleted function. Every run insert now
 * takes the function's row FOR KEY SHARE (as the foreign key's check does) and
 * reads `deleted_at`: the delete locks the row FOR UPDATE first, so an insert
 * either commits before the delete looks for queued runs, or waits for the
 * delete and is written `cancelled` ("The function was deleted."), final and
 * never started.
 */
export class ComputeRunsOfLiveFunctions1764950000000 implements MigrationInterface {
  name = 'ComputeRunsOfLiveFunctions1764950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE FUNCTION compute.runs_of_live_functions() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.function_id IS NOT NULL AND NEW.status IN ('queued', 'running') THEN
          PERFORM 1 FROM compute.functions f WHERE f.id = NEW.function_id AND f.deleted_at IS NULL FOR KEY SHARE;
          IF NOT FOUND THEN
            NEW.status := 'cancelled';
            NEW.error := '{"name":"Cancelled","message":"The function was deleted."}';
            NEW.finished_at := now();
            NEW.started_at := NULL;
            NEW.worker_id := NULL;
            NEW.lease_expires_at := NULL;
          END IF;
        END IF;
        RETURN NEW;
      END
    $$`);
    await q.query(`CREATE TRIGGER runs_of_live_functions BEFORE INSERT ON compute.runs
      FOR EACH ROW EXECUTE FUNCTION compute.runs_of_live_functions()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TRIGGER runs_of_live_functions ON compute.runs');
    await q.query('DROP FUNCTION compute.runs_of_live_functions()');
  }
}
