import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { createTestDatabase, ManualClock, watchLockWaits, type TestDatabase } from '@strata/testing';
import type { ComputeConfig } from '../src/compute.config.js';
import { createComputeApp, migrateCompute } from '../src/create-compute-app.js';
import { RunRetention } from '../src/runs/run-retention.js';
import { computeTestConfig } from './support/compute-config.js';

const DAY_MS = 24 * 3_600_000;

/**
 * The compute service's retention, through the service as it runs (its module, its
 * settings, its clock): runs and (event, trigger) pairs on both sides of their windows,
 * a sweep, and what is left.
 */
describe('compute retention, against a real PostgreSQL', () => {
  let db: TestDatabase;
  let config: ComputeConfig;
  let sql: DataSource;
  const apps: INestApplication[] = [];
  const clock = new ManualClock(new Date('2026-12-01T12:00:00Z'));
  const ago = (ms: number) => new Date(clock.now().getTime() - ms);

  /** An API replica on the test database, its sweeps left to the test. */
  async function replica(): Promise<RunRetention> {
    const app = await createComputeApp(config, { clock });
    await app.init();
    apps.push(app);
    return app.get(RunRetention);
  }

  beforeAll(async () => {
    db = await createTestDatabase('strata_compute_retention');
    config = computeTestConfig({
      DATABASE_URL: db.url,
      COMPUTE_SWEEPER_ENABLED: 'false',
      COMPUTE_SCHEDULER_ENABLED: 'false',
      COMPUTE_EVENT_TRIGGERS_ENABLED: 'false',
      COMPUTE_RETENTION_SWEEP_ENABLED: 'false',
      COMPUTE_RUN_RETENTION_DAYS: '30',
    });
    await migrateCompute(config);
    sql = new DataSource({ type: 'postgres', url: db.url, extra: { max: 4 } });
    await sql.initialize();
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await sql?.destroy();
    await db?.drop();
  });

  /**
   * `count` test runs with ids `<prefix><n>` (uuids), in `status`, queued a minute before
   * they ended `ageMs` before the clock (a queued or running one has not ended).
   */
  async function runs(prefix: string, count: number, status: string, ageMs: number): Promise<void> {
    const ended = ago(ageMs);
    await sql.query(
      `INSERT INTO compute.runs (id, job_id, workspace_slug, function_code_hash, code, execution_source, status, params,
                                 params_key_version, execution_context, limits, logs, queued_at, started_at, finished_at,
                                 created_by)
       SELECT ($1 || lpad(n::text, 12, '0'))::uuid, gen_random_uuid(), 'retention-a', $2, 'async function run() {}',
              'manual', $3, 'sealed', 1, '{}', '{}', '[{"level":"info","message":"hi"}]', $4, $4,
              CASE WHEN $3 IN ('queued', 'running') THEN NULL ELSE $5::timestamptz END, 'test'
         FROM generate_series(1, $6::int) AS n`,
      [prefix, 'a'.repeat(64), status, new Date(ended.getTime() - 60_000), ended, count],
    );
  }

  const count = async (table: string, where = 'true', params: unknown[] = []): Promise<number> =>
    Number((await sql.query<{ n: string }[]>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`, params))[0]!.n);
  const runsLike = (prefix: string) => count('compute.runs', 'id::text LIKE $1', [`${prefix}%`]);

  it('deletes runs that ended more than COMPUTE_RUN_RETENTION_DAYS ago with their documents, and no run still going', async () => {
    const retention = await replica();
    await runs('00000000-0000-4000-8001-', 3, 'succeeded', 31 * DAY_MS);
    await runs('00000000-0000-4000-8002-', 1, 'failed', 30 * DAY_MS + 1000);
    await runs('00000000-0000-4000-8003-', 1, 'timed_out', 40 * DAY_MS);
    await runs('00000000-0000-4000-8004-', 1, 'rate_limited', 40 * DAY_MS);
    await runs('00000000-0000-4000-8005-', 1, 'cancelled', 40 * DAY_MS);
    await runs('00000000-0000-4000-8006-', 2, 'succeeded', 29 * DAY_MS);
    await runs('00000000-0000-4000-8007-', 1, 'queued', 60 * DAY_MS);
    await runs('00000000-0000-4000-8008-', 1, 'running', 60 * DAY_MS);
    await sql.query(
      `INSERT INTO compute.run_documents (id, workspace_slug, run_id, name, content, size_bytes, created_at, expires_at)
       VALUES (gen_random_uuid(), 'retention-a', '00000000-0000-4000-8001-000000000001', 'doc', 'sealed', 6, $1, $2),
              (gen_random_uuid(), 'retention-a', '00000000-0000-4000-8006-000000000001', 'doc', 'sealed', 6, $1, $2)`,
      [ago(40 * DAY_MS), clock.now()],
    );

    const deleted = await retention.sweep();

    expect(deleted['compute.runs']).toBe(7);
    for (const gone of ['8001', '8002', '8003', '8004', '8005']) {
      expect(await runsLike(`00000000-0000-4000-${gone}-`)).toBe(0);
    }
    expect(await runsLike('00000000-0000-4000-8006-')).toBe(2);
    expect(await runsLike('00000000-0000-4000-8007-')).toBe(1);
    expect(await runsLike('00000000-0000-4000-8008-')).toBe(1);
    expect(
      (await sql.query<{ run_id: string }[]>('SELECT run_id FROM compute.run_documents')).map((r) => r.run_id),
    ).toEqual(['00000000-0000-4000-8006-000000000001']);

    clock.advance(2 * DAY_MS);
    expect((await retention.sweep())['compute.runs']).toBe(2);
    expect(await count('compute.run_documents')).toBe(0);
    expect(await runsLike('00000000-0000-4000-8007-')).toBe(1);
    expect(await runsLike('00000000-0000-4000-8008-')).toBe(1);
  });

  it("forgets (record event, trigger) pairs a day past the records stream's 7 days", async () => {
    const retention = await replica();
    const pair = (eventId: string, ageMs: number) =>
      sql.query(
        `INSERT INTO compute.trigger_event_runs (event_id, trigger_id, workspace_slug, run_id, created_at)
         VALUES ($1, gen_random_uuid(), 'retention-a', gen_random_uuid(), $2)`,
        [eventId, ago(ageMs)],
      );
    // More than one batch: a pass forgets every pair past the window, not one batch per pass.
    await sql.query(
      `INSERT INTO compute.trigger_event_runs (event_id, trigger_id, workspace_slug, run_id, created_at)
       SELECT 'event-9-days-' || n, gen_random_uuid(), 'retention-a', gen_random_uuid(), $1
         FROM generate_series(1, 2500) AS n`,
      [ago(9 * DAY_MS)],
    );
    await pair('event-8-days', 8 * DAY_MS + 1000);
    await pair('event-7-days', 7 * DAY_MS + 1000);
    await pair('event-today', 1000);

    expect((await retention.sweep())['compute.trigger_event_runs']).toBe(2_501);
    expect(
      (
        await sql.query<{ event_id: string }[]>('SELECT event_id FROM compute.trigger_event_runs ORDER BY event_id')
      ).map((r) => r.event_id),
    ).toEqual(['event-7-days', 'event-today']);
  });

  it('two replicas sweeping at once share the rows: each goes once, none fails, none waits for a row another holds', async () => {
    const [a, b] = [await replica(), await replica()];
    await sql.query('DELETE FROM compute.runs');
    await runs('00000000-0000-4000-8009-', 1_500, 'succeeded', 60 * DAY_MS);
    const holder = sql.createQueryRunner();
    await holder.startTransaction();
    await holder.query(
      `SELECT id FROM compute.runs WHERE id IN ('00000000-0000-4000-8009-000000000005',
         '00000000-0000-4000-8009-000000001234') FOR UPDATE`,
    );
    const locks = watchLockWaits(sql);
    try {
      const swept = Promise.all([a.sweep(), b.sweep()]);
      const first = await Promise.race([swept, locks.waited]);
      expect(first).not.toBe(true); // true: a sweep queued behind the held rows
      const [byA, byB] = await swept;
      expect(byA['compute.runs']! + byB['compute.runs']!).toBe(1_498);
      expect(await runsLike('00000000-0000-4000-8009-')).toBe(2);
    } finally {
      locks.stop();
      await holder.rollbackTransaction();
      await holder.release();
    }
    expect((await a.sweep())['compute.runs']).toBe(2);
  });
});
