import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { eventually } from './isolation.js';

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/** The server the tests use: `TEST_DATABASE_URL`, else `DATABASE_URL`, else the local default. */
export function testServerUrl(): string {
  return process.env['TEST_DATABASE_URL'] ?? process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/strata';
}

/** A database of this test run's own, so runs never see each other's data. */
export async function createTestDatabase(prefix = 'strata_test'): Promise<TestDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new URL(testServerUrl());
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`CREATE DATABASE "${name}"`);
  await client.end();
  const url = new URL(testServerUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: admin.toString() });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * Resolves once a session of the queried database waits for a lock (a
 * statement held behind another transaction), or fails after `timeoutMs`: how
 * a test sees that a write is blocked, without sleeping and hoping.
 */
export function lockWaiter(db: { query(sql: string): Promise<unknown> }, timeoutMs = 10_000): Promise<true> {
  return eventually(
    async () => {
      const rows = (await db.query(
        "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' LIMIT 1",
      )) as unknown[];
      return rows.length > 0 ? true : undefined;
    },
    timeoutMs,
    20,
  );
}

/**
 * Watches, until `stop()`, whether a session of the queried database waits for a
 * lock; `waited` resolves as soon as one does (and never once stopped). How a test
 * shows that concurrent work passes rows over instead of queueing behind a lock
 * (`SKIP LOCKED`), with no timing threshold: race the work against `waited`.
 */
export function watchLockWaits(db: { query(sql: string): Promise<unknown> }): {
  readonly waited: Promise<true>;
  stop(): void;
} {
  let stopped = false;
  const waited = new Promise<true>((resolve) => {
    const look = async (): Promise<void> => {
      while (!stopped) {
        const rows = (await db
          .query(
            "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' LIMIT 1",
          )
          .catch(() => [])) as unknown[];
        if (rows.length > 0 && !stopped) return resolve(true);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    void look();
  });
  return {
    waited,
    stop: () => {
      stopped = true;
    },
  };
}
