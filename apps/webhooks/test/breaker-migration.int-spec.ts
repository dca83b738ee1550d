import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { serviceDataSourceOptions } from '@strata/db';
import { createTestDatabase, type TestDatabase } from '@strata/testing';
import { MIGRATIONS, WEBHOOKS_SCHEMA } from '../src/migrations/index.js';
import { WebhooksBreakerPerWorkspace1764000000000 } from '../src/migrations/1764000000000-webhooks-breaker-per-workspace.js';

const RECEIVER = 'https://hooks.example.test';
const OPENED_AT = new Date('2026-11-21T12:00:00.000Z');
const at = (secondsFromOpening: number) => new Date(OPENED_AT.getTime() + secondsFromOpening * 1000);

/** A data source on the test database running `migrations`. */
async function dataSource(url: string, migrations: typeof MIGRATIONS): Promise<DataSource> {
  const ds = new DataSource(serviceDataSourceOptions({ url, schema: WEBHOOKS_SCHEMA, entities: [], migrations }));
  await ds.initialize();
  return ds;
}

describe('migration: circuit breakers per workspace and receiver', () => {
  let db: TestDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase('strata_webhooks_test');
    const before = await dataSource(
      db.url,
      MIGRATIONS.slice(0, MIGRATIONS.indexOf(WebhooksBreakerPerWorkspace1764000000000)),
    );
    await before.query(`CREATE SCHEMA ${WEBHOOKS_SCHEMA}`);
    await before.runMigrations();
    // Three workspaces sent to one receiver: a's failures opened its circuit, b sent a request
    // within the window before, c only an hour earlier.
    let n = 0;
    const attempt = async (workspace: string, outcome: string, recordedAt: Date) => {
      n++;
      const sub = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
      const delivery = `00000000-0000-4000-9000-${String(n).padStart(12, '0')}`;
      await before.query(
        `INSERT INTO webhooks.subscriptions (id, workspace_slug, name, url, events, secret, created_by)
         VALUES ($1, $2, 'hook', $3, '{record_created}', 'sealed', 'test')`,
        [sub, workspace, `${RECEIVER}/${workspace}`],
      );
      await before.query(
        `INSERT INTO webhooks.deliveries (id, workspace_slug, subscription_id, event, request_body)
         VALUES ($1, $2, $3, 'record_created', '{}')`,
        [delivery, workspace, sub],
      );
      await before.query(
        `INSERT INTO webhooks.delivery_attempts (delivery_id, subscription_id, attempt, receiver, outcome, recorded_at)
         VALUES ($1, $2, 1, $3, $4, $5)`,
        [delivery, sub, RECEIVER, outcome, recordedAt],
      );
    };
    for (let i = 0; i < 5; i++) await attempt('a', 'failure', at(-1));
    await attempt('b', 'success', at(-2));
    await attempt('c', 'failure', at(-3600));
    await before.query('INSERT INTO webhooks.receiver_circuits (receiver, opened_at) VALUES ($1, $2)', [
      RECEIVER,
      OPENED_AT,
    ]);
    await before.destroy();
    // Up to this migration: the later ones are not what this file checks.
    ds = await dataSource(
      db.url,
      MIGRATIONS.slice(0, MIGRATIONS.indexOf(WebhooksBreakerPerWorkspace1764000000000) + 1),
    );
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  const circuits = () =>
    ds.query<Record<string, unknown>[]>(
      'SELECT workspace_slug, receiver, opened_at FROM webhooks.receiver_circuits ORDER BY workspace_slug, receiver',
    );
  const originCircuits = () =>
    ds.query<Record<string, unknown>[]>('SELECT receiver, opened_at FROM webhooks.receiver_circuits ORDER BY receiver');
  const indexes = async () =>
    (
      await ds.query<{ indexname: string }[]>(
        `SELECT indexname FROM pg_indexes WHERE schemaname = 'webhooks' AND tablename = 'delivery_attempts'`,
      )
    )
      .map((r) => r.indexname)
      .sort();
  const primaryKey = async () =>
    (
      await ds.query<{ column_name: string }[]>(
        `SELECT a.attname AS column_name FROM pg_index i
           JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
          WHERE i.indrelid = 'webhooks.receiver_circuits'::regclass AND i.indisprimary ORDER BY a.attname`,
      )
    ).map((r) => r.column_name);

  it('up: attempts carry their workspace, and an open circuit stays open for the workspaces that sent to it', async () => {
    expect(await ds.runMigrations()).toHaveLength(1);
    expect(await circuits()).toEqual([
      { workspace_slug: 'a', receiver: RECEIVER, opened_at: OPENED_AT },
      { workspace_slug: 'b', receiver: RECEIVER, opened_at: OPENED_AT },
    ]);
    expect(await primaryKey()).toEqual(['receiver', 'workspace_slug']);
    const attempts = await ds.query<{ workspace_slug: string; n: number }[]>(
      'SELECT workspace_slug, count(*)::int AS n FROM webhooks.delivery_attempts GROUP BY 1 ORDER BY 1',
    );
    expect(attempts).toEqual([
      { workspace_slug: 'a', n: 5 },
      { workspace_slug: 'b', n: 1 },
      { workspace_slug: 'c', n: 1 },
    ]);
    expect(await indexes()).toContain('delivery_attempts_breaker_idx');
    expect(await indexes()).not.toContain('delivery_attempts_receiver_idx');
  });

  it('down: one circuit per receiver again, open since the earliest opening', async () => {
    await ds.query(
      `INSERT INTO webhooks.receiver_circuits (workspace_slug, receiver, opened_at) VALUES ('c', $1, $2)`,
      [RECEIVER, at(-60)],
    );
    await ds.query(
      `INSERT INTO webhooks.receiver_circuits (workspace_slug, receiver, opened_at) VALUES ('a', 'https://other.example.test', $1)`,
      [at(5)],
    );
    await ds.undoLastMigration();
    expect(await originCircuits()).toEqual([
      { receiver: RECEIVER, opened_at: at(-60) },
      { receiver: 'https://other.example.test', opened_at: at(5) },
    ]);
    expect(await primaryKey()).toEqual(['receiver']);
    const columns = await ds.query<{ column_name: string }[]>(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = 'webhooks' AND table_name = 'delivery_attempts'`,
    );
    expect(columns.map((c) => c.column_name)).not.toContain('workspace_slug');
    expect(await indexes()).toContain('delivery_attempts_receiver_idx');
    expect(await indexes()).not.toContain('delivery_attempts_breaker_idx');
  });

  it('up again after down', async () => {
    expect(await ds.runMigrations()).toHaveLength(1);
    expect((await circuits()).map((c) => [c['workspace_slug'], c['receiver']])).toEqual([
      ['a', RECEIVER],
      ['b', RECEIVER],
    ]);
  });
});
