import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { loadConfig } from '@strata/platform';
import { createTestDatabase, ManualClock, testNatsPrefix, watchLockWaits, type TestDatabase } from '@strata/testing';
import { createDataApp, migrateData } from '../src/create-data-app.js';
import { DataConfig } from '../src/data.config.js';
import { RecordRetention } from '../src/records/record-retention.js';
import { RetentionSweeper } from '../src/records/retention-sweeper.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The data service's retention, through the service as it runs (its module, its settings,
 * its clock): Idempotency-Keys, changelog entries and deleted records on both sides of their
 * windows, a sweep, and what is left.
 */
describe('data retention, against a real PostgreSQL', () => {
  let db: TestDatabase;
  let config: DataConfig;
  let sql: DataSource;
  const apps: INestApplication[] = [];
  const clock = new ManualClock(new Date('2026-12-01T12:00:00Z'));
  const ago = (ms: number) => new Date(clock.now().getTime() - ms);

  /** A replica of the service on the test database, its sweeps left to the test. */
  async function replica(): Promise<{ retention: RecordRetention; policies: RetentionSweeper }> {
    const app = await createDataApp(config, { clock });
    await app.init();
    apps.push(app);
    return { retention: app.get(RecordRetention), policies: app.get(RetentionSweeper) };
  }

  beforeAll(async () => {
    db = await createTestDatabase('strata_data_retention');
    config = loadConfig(DataConfig, {
      ...process.env,
      STRATA_ENV: 'development',
      DATABASE_URL: db.url,
      NATS_PREFIX: testNatsPrefix(),
      DATA_OUTBOX_RELAY_ENABLED: 'false',
      DATA_TTL_SWEEP_ENABLED: 'false',
      DATA_RETENTION_SWEEP_ENABLED: 'false',
      DATA_IDEMPOTENCY_WINDOW_HOURS: '24',
      DATA_CHANGELOG_RETENTION_DAYS: '365',
      DATA_DELETED_RECORD_RETENTION_DAYS: '30',
    });
    await migrateData(config);
    sql = new DataSource({ type: 'postgres', url: db.url, extra: { max: 4 } });
    await sql.initialize();
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await sql?.destroy();
    await db?.drop();
  });

  /** A collection of workspace `ws` with `retentionPolicy` (none when undefined); its id. */
  async function collection(ws: string, retentionPolicy?: object): Promise<string> {
    const id = randomUUID();
    await sql.query(
      `INSERT INTO data.collections (id, workspace_slug, record_slug, name, properties, schema_discovery_config,
                                     metadata, created_by, last_updated_by, retention_policy)
       VALUES ($1, $2, $3, 'Things', '[]', '{}', '{}', 'me', 'me', $4)`,
      [id, ws, `things-${id.slice(0, 8)}`, retentionPolicy ? JSON.stringify(retentionPolicy) : null],
    );
    return id;
  }

  /** A record of the collection (deleted `deletedAgoMs` before the clock, or live), with one version and a unique value; its id. */
  async function record(ws: string, collectionId: string, deletedAgoMs?: number): Promise<string> {
    const id = randomUUID();
    await sql.query(
      `INSERT INTO data.records (id, workspace_slug, collection_id, data, created_by, updated_by, deleted_at, deleted_by)
       VALUES ($1, $2, $3, '{"n": 1}', 'me', 'me', $4, $5)`,
      [
        id,
        ws,
        collectionId,
        deletedAgoMs === undefined ? null : ago(deletedAgoMs),
        deletedAgoMs === undefined ? null : 'me',
      ],
    );
    await sql.query(
      `INSERT INTO data.record_versions (record_id, version, data, changes, updated_by, updated_at)
       VALUES ($1, 1, '{"n": 1}', '{}', 'me', $2)`,
      [id, ago(DAY_MS)],
    );
    await sql.query(
      `INSERT INTO data.unique_values (collection_id, field, value, record_id) VALUES ($1, 'n', $2::text, $2::uuid)`,
      [collectionId, id],
    );
    return id;
  }

  /** `count` changelog entries of the record, `ageMs` before the clock (a microsecond apart). */
  async function changelog(recordId: string, ageMs: number, count = 1): Promise<void> {
    await sql.query(
      `INSERT INTO data.record_changelog (id, record_id, action, user_id, changes, at)
       SELECT gen_random_uuid(), $1, 'update', 'me', '{}', $2::timestamptz + n * interval '1 microsecond'
         FROM generate_series(1, $3::int) AS n`,
      [recordId, ago(ageMs), count],
    );
  }

  const count = async (table: string, where = 'true', params: unknown[] = []): Promise<number> =>
    Number((await sql.query<{ n: string }[]>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`, params))[0]!.n);
  const entriesOf = (recordId: string) => count('data.record_changelog', 'record_id = $1', [recordId]);

  it('deletes Idempotency-Keys past DATA_IDEMPOTENCY_WINDOW_HOURS', async () => {
    const { retention } = await replica();
    const key = (key: string, ageMs: number) =>
      sql.query(
        `INSERT INTO data.idempotency_keys (workspace_slug, key, request_hash, status, response, created_at)
         VALUES ('keys', $1, 'h', 201, '{}', $2)`,
        [key, ago(ageMs)],
      );
    await key('old-1', 25 * HOUR_MS);
    await key('old-2', 24 * HOUR_MS + 1000);
    await key('fresh', 23 * HOUR_MS);

    expect((await retention.sweep())['data.idempotency_keys']).toBe(2);
    expect(
      (await sql.query<{ key: string }[]>('SELECT key FROM data.idempotency_keys ORDER BY key')).map((r) => r.key),
    ).toEqual(['fresh']);
  });

  it("deletes changelog entries past the collection's maxAgeDays, else past DATA_CHANGELOG_RETENTION_DAYS", async () => {
    const { retention, policies } = await replica();
    const ws = 'changelog';
    const plain = await record(ws, await collection(ws));
    const versionsOnly = await record(ws, await collection(ws, { maxVersions: 3 }));
    const longer = await record(ws, await collection(ws, { maxAgeDays: 3650 }));
    const shorter = await record(ws, await collection(ws, { maxAgeDays: 10 }));
    // Deleted a day ago, so still restorable: its changelog is kept whole with it.
    const deleted = await record(ws, await collection(ws), DAY_MS);
    for (const id of [plain, versionsOnly, longer, shorter, deleted]) {
      for (const days of [400, 366, 300, 20, 5]) await changelog(id, days * DAY_MS);
    }
    // More than a batch past the window, kept (a longer policy) and due interleaved: one pass goes through them all.
    await changelog(longer, 500 * DAY_MS, 1_500);
    await changelog(plain, 500 * DAY_MS - 1000, 1_200);

    expect((await retention.sweep())['data.record_changelog']).toBe(1_204);
    expect(await entriesOf(plain)).toBe(3);
    expect(await entriesOf(versionsOnly)).toBe(3);
    expect(await entriesOf(longer)).toBe(1_505);
    expect(await entriesOf(deleted)).toBe(5);
    expect(await entriesOf(shorter)).toBe(5);

    // The collection's own maxAgeDays is applied by its policy sweep.
    expect((await policies.sweep()).changelog).toBe(4);
    expect(await entriesOf(shorter)).toBe(1);
    expect(await entriesOf(longer)).toBe(1_505);
    expect(await entriesOf(plain)).toBe(3);

    // Seventy days on, the 300-day-old entries are past the platform's window too.
    clock.advance(70 * DAY_MS);
    expect((await retention.sweep())['data.record_changelog']).toBe(2);
    expect(await entriesOf(plain)).toBe(2);
    expect(await entriesOf(versionsOnly)).toBe(2);
  });

  it('removes records deleted more than DATA_DELETED_RECORD_RETENTION_DAYS ago for good, with their versions and changelog', async () => {
    const { retention } = await replica();
    const ws = 'deleted';
    const c = await collection(ws);
    const old = [await record(ws, c, 31 * DAY_MS), await record(ws, c, 30 * DAY_MS + 1000)];
    const recent = await record(ws, c, 29 * DAY_MS);
    const live = await record(ws, c);
    for (const id of [...old, recent, live]) await changelog(id, DAY_MS);
    const left = async (id: string) => ({
      record: await count('data.records', 'id = $1', [id]),
      versions: await count('data.record_versions', 'record_id = $1', [id]),
      changelog: await entriesOf(id),
      unique: await count('data.unique_values', 'record_id = $1', [id]),
    });

    expect((await retention.sweep())['data.records']).toBe(2);
    for (const id of old) expect(await left(id)).toEqual({ record: 0, versions: 0, changelog: 0, unique: 0 });
    expect(await left(recent)).toEqual({ record: 1, versions: 1, changelog: 1, unique: 1 });
    expect(await left(live)).toEqual({ record: 1, versions: 1, changelog: 1, unique: 1 });

    clock.advance(2 * DAY_MS);
    expect((await retention.sweep())['data.records']).toBe(1);
    expect((await left(recent)).record).toBe(0);
    expect(await left(live)).toEqual({ record: 1, versions: 1, changelog: 1, unique: 1 });
  });

  it('two replicas sweeping at once share the rows: each goes once, none fails, none waits for a row another holds', async () => {
    const [a, b] = [(await replica()).retention, (await replica()).retention];
    const ws = 'replicas';
    const c = await collection(ws);
    await sql.query(
      `INSERT INTO data.records (id, workspace_slug, collection_id, data, created_by, updated_by, deleted_at, deleted_by)
       SELECT gen_random_uuid(), $1, $2, '{}', 'me', 'me', $3, 'me' FROM generate_series(1, 600)`,
      [ws, c, ago(40 * DAY_MS)],
    );
    await sql.query(
      `INSERT INTO data.record_versions (record_id, version, data, changes, updated_by, updated_at)
       SELECT r.id, v, '{}', '{}', 'me', $2 FROM data.records r, generate_series(1, 3) AS v WHERE r.collection_id = $1`,
      [c, ago(41 * DAY_MS)],
    );
    const live = await record(ws, c);
    await changelog(live, 400 * DAY_MS, 2_500);
    const [heldRecord] = await sql.query<{ id: string }[]>(
      'SELECT id FROM data.records WHERE collection_id = $1 AND deleted_at IS NOT NULL ORDER BY id LIMIT 1',
      [c],
    );
    const [heldEntry] = await sql.query<{ id: string }[]>(
      'SELECT id FROM data.record_changelog WHERE record_id = $1 ORDER BY at OFFSET 1234 LIMIT 1',
      [live],
    );
    const holder = sql.createQueryRunner();
    await holder.startTransaction();
    await holder.query('SELECT id FROM data.records WHERE id = $1 FOR UPDATE', [heldRecord!.id]);
    await holder.query('SELECT id FROM data.record_changelog WHERE id = $1 FOR UPDATE', [heldEntry!.id]);
    const locks = watchLockWaits(sql);
    try {
      const swept = Promise.all([a.sweep(), b.sweep()]);
      const first = await Promise.race([swept, locks.waited]);
      expect(first).not.toBe(true); // true: a sweep queued behind the held rows
      const [byA, byB] = await swept;
      expect(byA['data.records']! + byB['data.records']!).toBe(599);
      expect(byA['data.record_changelog']! + byB['data.record_changelog']!).toBe(2_499);
      expect(await count('data.records', 'collection_id = $1 AND deleted_at IS NOT NULL', [c])).toBe(1);
      expect(await count('data.record_versions', 'record_id = $1', [heldRecord!.id])).toBe(3);
      expect(await entriesOf(live)).toBe(1);
    } finally {
      locks.stop();
      await holder.rollbackTransaction();
      await holder.release();
    }
    const after = await a.sweep();
    expect(after['data.records']).toBe(1);
    expect(after['data.record_changelog']).toBe(1);
  });
});
