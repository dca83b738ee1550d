import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { loadConfig } from '@strata/platform';
import { createTestDatabase, ManualClock, testNatsPrefix, watchLockWaits, type TestDatabase } from '@strata/testing';
import { AuthConfig } from '../src/auth.config.js';
import { createAuthApp, migrateAuth } from '../src/create-auth-app.js';
import { OidcRetention } from '../src/oidc/oidc-retention.js';

const HOUR_MS = 3_600_000;

/**
 * The auth service's retention, through the service as it runs (its module, its settings,
 * its clock): OIDC payloads and login workspaces on both sides of the window, a sweep, and
 * what is left.
 */
describe('auth retention, against a real PostgreSQL', () => {
  let db: TestDatabase;
  let config: AuthConfig;
  let sql: DataSource;
  const apps: INestApplication[] = [];
  const clock = new ManualClock(new Date('2026-12-01T12:00:00Z'));
  const ago = (ms: number) => new Date(clock.now().getTime() - ms);

  /** A replica of the service on the test database, its sweep left to the test. */
  async function replica(): Promise<OidcRetention> {
    const app = await createAuthApp(config, { clock });
    await app.init();
    apps.push(app);
    return app.get(OidcRetention);
  }

  beforeAll(async () => {
    db = await createTestDatabase('strata_auth_retention');
    config = loadConfig(AuthConfig, {
      ...process.env,
      STRATA_ENV: 'development',
      DATABASE_URL: db.url,
      NATS_PREFIX: testNatsPrefix(),
      AUTH_RETENTION_SWEEP_ENABLED: 'false',
      AUTH_OIDC_RETENTION_HOURS: '24',
    });
    await migrateAuth(config);
    sql = new DataSource({ type: 'postgres', url: db.url, extra: { max: 4 } });
    await sql.initialize();
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await sql?.destroy();
    await db?.drop();
  });

  /** A payload of the provider that expires `expiresInMs` from the clock's now (null: never). */
  const payload = (kind: string, id: string, expiresInMs: number | null, grantId: string | null = null) =>
    sql.query(`INSERT INTO iam.oidc_payloads (kind, id, payload, grant_id, expires_at) VALUES ($1, $2, '{}', $3, $4)`, [
      kind,
      id,
      grantId,
      expiresInMs === null ? null : new Date(clock.now().getTime() + expiresInMs),
    ]);
  const loginWorkspace = (grantId: string, ageMs: number) =>
    sql.query(`INSERT INTO iam.login_workspaces (grant_id, workspace_slug, created_at) VALUES ($1, 'acme', $2)`, [
      grantId,
      ago(ageMs),
    ]);
  const ids = async (sqlText: string) => (await sql.query<{ id: string }[]>(sqlText)).map((r) => r.id);

  it('deletes payloads expired more than AUTH_OIDC_RETENTION_HOURS ago, and the workspaces of logins whose grant is gone', async () => {
    const retention = await replica();
    await sql.query('DELETE FROM iam.oidc_payloads');
    await payload('Session', 'session-old', -25 * HOUR_MS);
    await payload('AuthorizationCode', 'code-old', -24 * HOUR_MS - 1000, 'grant-old');
    await payload('Grant', 'grant-old', -30 * HOUR_MS);
    await payload('Interaction', 'interaction-recent', -23 * HOUR_MS);
    await payload('Grant', 'grant-live', 20 * HOUR_MS);
    await payload('Grant', 'grant-expired-recently', -HOUR_MS);
    await payload('ReplayDetection', 'no-expiry', null);
    await loginWorkspace('grant-old', 54 * HOUR_MS);
    await loginWorkspace('grant-live', 28 * HOUR_MS);
    await loginWorkspace('grant-expired-recently', 25 * HOUR_MS);
    // Revoked (its payloads deleted by the provider): nothing will ask for it again.
    await loginWorkspace('grant-revoked', 30 * HOUR_MS);
    // Its grant is gone, but the login is younger than the window.
    await loginWorkspace('grant-young', HOUR_MS);

    const deleted = await retention.sweep();

    expect(deleted).toEqual({ 'iam.oidc_payloads': 3, 'iam.login_workspaces': 2 });
    expect(await ids('SELECT id FROM iam.oidc_payloads ORDER BY id')).toEqual([
      'grant-expired-recently',
      'grant-live',
      'interaction-recent',
      'no-expiry',
    ]);
    expect(await ids('SELECT grant_id AS id FROM iam.login_workspaces ORDER BY grant_id')).toEqual([
      'grant-expired-recently',
      'grant-live',
      'grant-young',
    ]);

    // A day on: the grant that had just expired is past the window, and its login's workspace goes with it.
    clock.advance(24 * HOUR_MS);
    expect(await retention.sweep()).toEqual({ 'iam.oidc_payloads': 2, 'iam.login_workspaces': 2 });
    expect(await ids('SELECT id FROM iam.oidc_payloads ORDER BY id')).toEqual(['grant-live', 'no-expiry']);
    expect(await ids('SELECT grant_id AS id FROM iam.login_workspaces ORDER BY grant_id')).toEqual(['grant-live']);
  });

  it('two replicas sweeping at once share the rows: each goes once, none fails, none waits for a row another holds', async () => {
    const [a, b] = [await replica(), await replica()];
    await sql.query('DELETE FROM iam.oidc_payloads');
    await sql.query(
      `INSERT INTO iam.oidc_payloads (kind, id, payload, expires_at)
       SELECT 'Session', 'session-' || n, '{}', $1 FROM generate_series(1, 2500) AS n`,
      [ago(48 * HOUR_MS)],
    );
    const holder = sql.createQueryRunner();
    await holder.startTransaction();
    await holder.query(`SELECT id FROM iam.oidc_payloads WHERE id IN ('session-3', 'session-2222') FOR UPDATE`);
    const locks = watchLockWaits(sql);
    try {
      const swept = Promise.all([a.sweep(), b.sweep()]);
      const first = await Promise.race([swept, locks.waited]);
      expect(first).not.toBe(true); // true: a sweep queued behind the held rows
      const [byA, byB] = await swept;
      expect(byA['iam.oidc_payloads']! + byB['iam.oidc_payloads']!).toBe(2_498);
      expect(await ids('SELECT id FROM iam.oidc_payloads ORDER BY id')).toEqual(['session-2222', 'session-3']);
    } finally {
      locks.stop();
      await holder.rollbackTransaction();
      await holder.release();
    }
    expect((await a.sweep())['iam.oidc_payloads']).toBe(2);
  });
});
