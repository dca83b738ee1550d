import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { ManualClock, watchLockWaits } from '@strata/testing';
import { RunRetention } from '../src/runs/run-retention.js';
import { RunEndings } from '../src/runs/run-endings.js';
import { RunsRepository } from '../src/runs/runs.repository.js';
import { openOrchestrationTestDatabase, type OrchestrationTestDatabase } from './support/orchestration-database.js';

/** Finished runs past their TTL go, however many there are, in one pass of batches of 1,000. */
describe('the retention of finished orchestration runs, against a real PostgreSQL', () => {
  let db: OrchestrationTestDatabase;
  let ds: DataSource;
  let retention: RunRetention;
  const clock = new ManualClock(new Date('2026-11-26T08:00:00Z'));

  beforeAll(async () => {
    db = await openOrchestrationTestDatabase(6);
    ds = db.ds;
    retention = new RunRetention(new RunsRepository(ds, new RunEndings()), clock, db.config);
  });

  afterAll(async () => {
    await db?.close();
  });

  /** `count` runs of one status whose TTL ends `ttlOffsetMs` from the clock's now. */
  async function runs(prefix: string, count: number, status: string, ttlOffsetMs: number): Promise<void> {
    await ds.query(
      `INSERT INTO orchestration.runs (id, workspace_slug, orchestration_id, orchestration_version, status, input, context,
                                       step_outputs, trigger_type, trigger_metadata, created_at, ttl_expires_at)
       SELECT $1 || n, 'retention-a', 'orch', 1, $2, '{}', '{}', '{}', 'on-demand', '{}', $3, $4
         FROM generate_series(1, $5) AS n`,
      [prefix, status, clock.now(), new Date(clock.now().getTime() + ttlOffsetMs), count],
    );
  }

  const left = async (prefix: string) =>
    Number(
      (
        await ds.query<{ n: string }[]>('SELECT count(*) AS n FROM orchestration.runs WHERE id LIKE $1', [`${prefix}%`])
      )[0]!.n,
    );

  it('deletes every expired finished run in one pass and says how many', async () => {
    await runs('done-', 1_203, 'completed', -60_000);
    await runs('failed-', 4, 'failed', -1);
    await runs('kept-', 3, 'completed', 60_000);
    await runs('running-', 2, 'running', -60_000);
    // The key of the webhook delivery that started a run goes with the run, and only then; a record
    // event's key stays (the stream may deliver it again long after).
    await ds.query(
      `INSERT INTO orchestration.event_runs (event_id, orchestration_id, workspace_slug, run_id, created_at)
       VALUES ('webhook:msg_1', 'orch', 'retention-a', 'done-1', now()),
              ('webhook:msg_2', 'orch', 'retention-a', 'kept-1', now()),
              ('event-3', 'orch', 'retention-a', 'done-2', now())`,
    );

    expect((await retention.sweep())['orchestration.runs']).toBe(1_207);
    expect(
      (await ds.query<{ run_id: string }[]>('SELECT run_id FROM orchestration.event_runs ORDER BY run_id')).map(
        (r) => r.run_id,
      ),
    ).toEqual(['done-2', 'kept-1']);
    expect(await left('done-')).toBe(0);
    expect(await left('failed-')).toBe(0);
    expect(await left('kept-')).toBe(3);
    expect(await left('running-')).toBe(2);
    expect((await retention.sweep())['orchestration.runs']).toBe(0);
  });

  it('two sweepers at once share the runs: each goes once, none fails, none waits for a run another holds', async () => {
    const other = new RunRetention(new RunsRepository(ds, new RunEndings()), clock, db.config);
    await runs('shared-', 1_500, 'completed', -60_000);
    const holder = ds.createQueryRunner();
    await holder.startTransaction();
    await holder.query(`SELECT id FROM orchestration.runs WHERE id IN ('shared-7', 'shared-1400') FOR UPDATE`);
    const locks = watchLockWaits(ds);
    try {
      const swept = Promise.all([retention.sweep(), other.sweep()]);
      const first = await Promise.race([swept, locks.waited]);
      expect(first).not.toBe(true); // true: a sweep queued behind the held runs
      const [a, b] = await swept;
      expect(a['orchestration.runs']! + b['orchestration.runs']!).toBe(1_498);
      expect(await left('shared-')).toBe(2);
    } finally {
      locks.stop();
      await holder.rollbackTransaction();
      await holder.release();
    }
    expect((await retention.sweep())['orchestration.runs']).toBe(2);
  });

  it('forgets record events the stream can no longer deliver again, and keeps newer ones and webhook keys', async () => {
    const day = 24 * 3_600_000;
    const at = (ageMs: number) => new Date(clock.now().getTime() - ageMs);
    await runs('hooked-', 1, 'running', 60_000);
    await ds.query(
      `INSERT INTO orchestration.event_runs (event_id, orchestration_id, workspace_slug, run_id, created_at)
       VALUES ('event-old', 'orch', 'retention-a', 'r-1', $1), ('event-recent', 'orch', 'retention-a', 'r-2', $2),
              ('webhook:msg_old', 'orch', 'retention-a', 'hooked-1', $1)`,
      [at(9 * day), at(7 * day)],
    );
    await retention.sweep();
    const kept = await ds.query<{ event_id: string }[]>(
      `SELECT event_id FROM orchestration.event_runs WHERE event_id IN ('event-old', 'event-recent', 'webhook:msg_old')
        ORDER BY event_id`,
    );
    // Older than the stream's 7 days and a day: gone; within them: kept; a webhook key goes only with its run.
    expect(kept.map((r) => r.event_id)).toEqual(['event-recent', 'webhook:msg_old']);
  });

  it('deletes plain HMAC signature claims past their window in batches, and no other key', async () => {
    const day = 24 * 3_600_000;
    const at = (offsetMs: number) => new Date(clock.now().getTime() + offsetMs);
    // 2,503 claims whose window ended (a pass of three batches), one ending right now (not after now: gone too).
    await ds.query(
      `INSERT INTO orchestration.event_runs (event_id, orchestration_id, workspace_slug, run_id, created_at, expires_at)
       SELECT 'hmac-sha256:expired-' || n, 'orch', 'retention-a', 'r-' || n, $1, $2 FROM generate_series(1, 2503) AS n`,
      [at(-2 * day), at(-1)],
    );
    await ds.query(
      `INSERT INTO orchestration.event_runs (event_id, orchestration_id, workspace_slug, run_id, created_at, expires_at)
       VALUES ('hmac-sha256:ends-now', 'orch', 'retention-a', 'r-now', $1, $2),
              ('hmac-sha256:open', 'orch', 'retention-a', 'r-open', $1, $3),
              ('hmac-sha256:claimed-long-ago', 'orch', 'retention-a', 'r-long', $4, $3),
              ('event-fresh', 'orch', 'retention-a', 'r-event', $1, NULL)`,
      [at(-day), at(0), at(1), at(-20 * day)],
    );
    await retention.sweep();
    const kept = await ds.query<{ event_id: string }[]>(
      `SELECT event_id FROM orchestration.event_runs
        WHERE event_id LIKE 'hmac-sha256:%' OR event_id = 'event-fresh' ORDER BY event_id`,
    );
    // A claim older than the record events' horizon but still in its window is kept: it is not a record event's key.
    expect(kept.map((r) => r.event_id)).toEqual(['event-fresh', 'hmac-sha256:claimed-long-ago', 'hmac-sha256:open']);
  });
});
