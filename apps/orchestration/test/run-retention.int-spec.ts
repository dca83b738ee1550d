import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { serviceDataSourceOptions } from '@strata/db';
import { loadConfig } from '@strata/platform';
import { createTestDatabase, ManualClock, type TestDatabase } from '@strata/testing';
import { ORCHESTRATION_ENTITIES } from '../src/app.module.js';
import { migrateOrchestration } from '../src/create-orchestration-app.js';
import { MIGRATIONS, ORCHESTRATION_SCHEMA } from '../src/migrations/index.js';
import { OrchestrationConfig } from '../src/orchestration.config.js';
import { RunRetention } from '../src/runs/run-retention.js';
import { RunsRepository } from '../src/runs/runs.repository.js';

/** Finished runs past their TTL go, however many there are, in one pass of batches of 1,000. */
describe('the retention of finished orchestration runs, against a real PostgreSQL', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let retention: RunRetention;
  const clock = new ManualClock(new Date('2026-11-26T08:00:00Z'));

  beforeAll(async () => {
    db = await createTestDatabase('strata_orchestration_test');
    const config = loadConfig(OrchestrationConfig, { ...process.env, STRATA_ENV: 'development', DATABASE_URL: db.url });
    await migrateOrchestration(config);
    ds = new DataSource(
      serviceDataSourceOptions({
        url: db.url,
        schema: ORCHESTRATION_SCHEMA,
        entities: ORCHESTRATION_ENTITIES,
        migrations: MIGRATIONS,
        poolSize: 2,
      }),
    );
    await ds.initialize();
    retention = new RunRetention(new RunsRepository(ds), clock, config);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
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

    expect(await retention.sweep()).toBe(1_207);
    expect(await left('done-')).toBe(0);
    expect(await left('failed-')).toBe(0);
    expect(await left('kept-')).toBe(3);
    expect(await left('running-')).toBe(2);
    expect(await retention.sweep()).toBe(0);
  });
});
