import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { loadConfig } from '@strata/platform';
import { createTestDatabase, ManualClock, testNatsPrefix, watchLockWaits, type TestDatabase } from '@strata/testing';
import { serviceDataSourceOptions } from '@strata/db';
import { createWebhooksApp, migrateWebhooks } from '../src/create-webhooks-app.js';
import { MIGRATIONS, WEBHOOKS_SCHEMA } from '../src/migrations/index.js';
import { WebhooksRetention } from '../src/retention/webhooks-retention.js';
import { WebhooksConfig } from '../src/webhooks.config.js';

const DAY_MS = 24 * 3_600_000;
const HOUR_MS = 3_600_000;

/**
 * The webhooks service's retention, through the service as it runs (its module, its
 * settings, its clock): rows on both sides of each window, one sweep, and what is left.
 */
describe('webhooks retention, against a real PostgreSQL', () => {
  let db: TestDatabase;
  let config: WebhooksConfig;
  let sql: DataSource;
  const apps: INestApplication[] = [];
  const clock = new ManualClock(new Date('2026-12-01T12:00:00Z'));
  const ago = (ms: number) => new Date(clock.now().getTime() - ms);
  const subscription = randomUUID();

  /** A replica of the service on the test database, its sweep left to the test. */
  async function replica(): Promise<WebhooksRetention> {
    const app = await createWebhooksApp(config, { clock });
    await app.init();
    apps.push(app);
    return app.get(WebhooksRetention);
  }

  beforeAll(async () => {
    db = await createTestDatabase('strata_webhooks_retention');
    config = loadConfig(WebhooksConfig, {
      ...process.env,
      STRATA_ENV: 'development',
      DATABASE_URL: db.url,
      NATS_PREFIX: testNatsPrefix(),
      WEBHOOKS_CONSUMER_ENABLED: 'false',
      WEBHOOKS_DISPATCHER_ENABLED: 'false',
      WEBHOOKS_RETENTION_SWEEP_ENABLED: 'false',
      WEBHOOKS_DELIVERY_RETENTION_DAYS: '30',
      WEBHOOKS_IDEMPOTENCY_WINDOW_HOURS: '24',
    });
    await migrateWebhooks(config);
    sql = new DataSource({ type: 'postgres', url: db.url, extra: { max: 4 } });
    await sql.initialize();
    await sql.query(
      `INSERT INTO webhooks.subscriptions (id, workspace_slug, name, url, events, secret, created_by)
       VALUES ($1, 'retention-a', 'hook', 'https://hooks.example.test', '{record_created}', 'sealed', 'test')`,
      [subscription],
    );
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await sql?.destroy();
    await db?.drop();
  });

  /** `count` deliveries of one status, finished (or, retrying, created) `ageMs` before the clock, each with two attempts. */
  async function deliveries(
    prefix: string,
    count: number,
    status: 'success' | 'failed' | 'retrying',
    ageMs: number,
    replayedFrom: string | null = null,
  ): Promise<void> {
    const at = ago(ageMs);
    await sql.query(
      `WITH made AS (
         INSERT INTO webhooks.deliveries (id, workspace_slug, subscription_id, event, request_body, status,
                                          replayed_from, attempt_count, next_attempt_at, created_at, completed_at)
         SELECT ($1 || lpad(n::text, 12, '0'))::uuid, 'retention-a', $2, 'record_created', '{}', $3, $4, 2,
                CASE WHEN $3 = 'retrying' THEN $5::timestamptz END, $5, CASE WHEN $3 <> 'retrying' THEN $5::timestamptz END
           FROM generate_series(1, $6::int) AS n
         RETURNING id)
       INSERT INTO webhooks.delivery_attempts (delivery_id, subscription_id, workspace_slug, attempt, receiver, outcome, recorded_at)
       SELECT id, $2, 'retention-a', a, 'https://hooks.example.test', 'failure', $5 FROM made, generate_series(1, 2) AS a`,
      [prefix, subscription, status, replayedFrom, at, count],
    );
  }

  const count = async (table: string, where = 'true', params: unknown[] = []): Promise<number> =>
    Number((await sql.query<{ n: string }[]>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`, params))[0]!.n);
  const deliveriesLike = (prefix: string) => count('webhooks.deliveries', 'id::text LIKE $1', [`${prefix}%`]);
  const attemptsOf = (prefix: string) =>
    count('webhooks.delivery_attempts', 'delivery_id::text LIKE $1', [`${prefix}%`]);

  it('deletes deliveries finished more than WEBHOOKS_DELIVERY_RETENTION_DAYS ago with their attempts, and keeps the rest', async () => {
    const retention = await replica();
    await deliveries('00000000-0000-4000-8001-', 3, 'success', 31 * DAY_MS);
    await deliveries('00000000-0000-4000-8002-', 2, 'failed', 30 * DAY_MS + 60_000);
    await deliveries('00000000-0000-4000-8003-', 4, 'success', 29 * DAY_MS);
    // Still retrying after 40 days (nothing leaves a delivery so; retention leaves it to the dispatcher).
    await deliveries('00000000-0000-4000-8004-', 1, 'retrying', 40 * DAY_MS);
    // A recent replay of a delivery retention deletes keeps naming it.
    await deliveries('00000000-0000-4000-8005-', 1, 'success', DAY_MS, '00000000-0000-4000-8001-000000000001');

    const deleted = await retention.sweep();

    expect(deleted['webhooks.deliveries']).toBe(5);
    expect(await deliveriesLike('00000000-0000-4000-8001-')).toBe(0);
    expect(await attemptsOf('00000000-0000-4000-8001-')).toBe(0);
    expect(await deliveriesLike('00000000-0000-4000-8002-')).toBe(0);
    expect(await attemptsOf('00000000-0000-4000-8002-')).toBe(0);
    expect(await deliveriesLike('00000000-0000-4000-8003-')).toBe(4);
    expect(await attemptsOf('00000000-0000-4000-8003-')).toBe(8);
    expect(await deliveriesLike('00000000-0000-4000-8004-')).toBe(1);
    const [replay] = await sql.query<{ replayed_from: string }[]>(
      `SELECT replayed_from FROM webhooks.deliveries WHERE id = '00000000-0000-4000-8005-000000000001'`,
    );
    expect(replay?.replayed_from).toBe('00000000-0000-4000-8001-000000000001');

    // Two days on, the ones finished 29 days ago are past the window too.
    clock.advance(2 * DAY_MS);
    expect((await retention.sweep())['webhooks.deliveries']).toBe(4);
    expect(await deliveriesLike('00000000-0000-4000-8003-')).toBe(0);
    expect(await deliveriesLike('00000000-0000-4000-8004-')).toBe(1);
    expect(await deliveriesLike('00000000-0000-4000-8005-')).toBe(1);
  });

  it('deletes subscription-create Idempotency-Keys past WEBHOOKS_IDEMPOTENCY_WINDOW_HOURS', async () => {
    const retention = await replica();
    const key = async (key: string, ageMs: number) =>
      sql.query(
        `INSERT INTO webhooks.idempotency_keys (workspace_slug, key, request_hash, subscription_id, created_at)
         VALUES ('retention-a', $1, 'h', $2, $3)`,
        [key, subscription, ago(ageMs)],
      );
    await key('old-1', 25 * HOUR_MS);
    await key('old-2', 24 * HOUR_MS + 1000);
    await key('fresh', 23 * HOUR_MS);

    expect((await retention.sweep())['webhooks.idempotency_keys']).toBe(2);
    expect(
      (await sql.query<{ key: string }[]>('SELECT key FROM webhooks.idempotency_keys ORDER BY key')).map((r) => r.key),
    ).toEqual(['fresh']);
  });

  it("the migration's down clears what replays name that retention deleted, and gives the foreign key back", async () => {
    const other = await createTestDatabase('strata_webhooks_retention_down');
    // The migrations up to retention's, so that it is the last one whatever later ones add.
    const upToRetention = MIGRATIONS.slice(
      0,
      MIGRATIONS.findIndex((m) => m.name === 'WebhooksRetention1766400000000') + 1,
    );
    expect(upToRetention.length).toBeGreaterThan(0);
    const ds = new DataSource(
      serviceDataSourceOptions({ url: other.url, schema: WEBHOOKS_SCHEMA, entities: [], migrations: upToRetention }),
    );
    try {
      await ds.initialize();
      await ds.query(`CREATE SCHEMA ${WEBHOOKS_SCHEMA}`);
      await ds.runMigrations({ transaction: 'each' });
      await ds.query(
        `INSERT INTO webhooks.subscriptions (id, workspace_slug, name, url, events, secret, created_by)
         VALUES ($1, 'a', 'hook', 'https://hooks.example.test', '{record_created}', 'sealed', 'test')`,
        [subscription],
      );
      // A replay whose original retention deleted.
      await ds.query(
        `INSERT INTO webhooks.deliveries (id, workspace_slug, subscription_id, event, request_body, replayed_from)
         VALUES ('00000000-0000-4000-8100-000000000001', 'a', $1, 'record_created', '{}',
                 '00000000-0000-4000-8100-000000000099')`,
        [subscription],
      );
      // TypeORM undoes a migration in a transaction unless told `none` (it reads no per-migration flag there).
      await ds.undoLastMigration({ transaction: 'none' });
      expect(await ds.query(`SELECT replayed_from FROM webhooks.deliveries`)).toEqual([{ replayed_from: null }]);
      await expect(
        ds.query(`UPDATE webhooks.deliveries SET replayed_from = '00000000-0000-4000-8100-000000000099'`),
      ).rejects.toThrow(/foreign key/);
      expect(await ds.runMigrations({ transaction: 'each' })).toHaveLength(1);
    } finally {
      await ds.destroy();
      await other.drop();
    }
  });

  it('two replicas sweeping at once share the rows: each goes once, none fails, none waits for a row another holds', async () => {
    const [a, b] = [await replica(), await replica()];
    await sql.query('DELETE FROM webhooks.delivery_attempts');
    await sql.query('DELETE FROM webhooks.deliveries');
    await deliveries('00000000-0000-4000-8006-', 2_400, 'success', 40 * DAY_MS);
    // A transaction elsewhere holds two of them: the sweeps pass them over instead of waiting.
    const holder = sql.createQueryRunner();
    await holder.startTransaction();
    await holder.query(
      `SELECT id FROM webhooks.deliveries WHERE id IN ('00000000-0000-4000-8006-000000000007',
         '00000000-0000-4000-8006-000000002000') FOR UPDATE`,
    );
    const locks = watchLockWaits(sql);
    try {
      const swept = Promise.all([a.sweep(), b.sweep()]);
      const first = await Promise.race([swept, locks.waited]);
      expect(first).not.toBe(true); // true: a sweep queued behind the held rows
      const [byA, byB] = await swept;
      expect(byA['webhooks.deliveries']! + byB['webhooks.deliveries']!).toBe(2_398);
      expect(await deliveriesLike('00000000-0000-4000-8006-')).toBe(2);
      expect(await attemptsOf('00000000-0000-4000-8006-')).toBe(4);
    } finally {
      locks.stop();
      await holder.rollbackTransaction();
      await holder.release();
    }
    expect((await a.sweep())['webhooks.deliveries']).toBe(2);
    expect(await count('webhooks.delivery_attempts')).toBe(0);
  });
});
