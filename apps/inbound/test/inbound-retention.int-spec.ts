import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { issueWorkspaceScope } from '@strata/db';
import { loadConfig } from '@strata/platform';
import { createTestDatabase, ManualClock, testNatsPrefix, watchLockWaits, type TestDatabase } from '@strata/testing';
import { createInboundApp, migrateInbound } from '../src/create-inbound-app.js';
import { InboundEventsRepository } from '../src/events/inbound-events.repository.js';
import { InboundRetention } from '../src/events/inbound-retention.js';
import { InboundConfig } from '../src/inbound.config.js';

const DAY_MS = 24 * 3_600_000;

/**
 * The inbound service's retention, through the service as it runs (its module, its
 * settings, its clock): arrivals on both sides of INBOUND_EVENT_RETENTION_DAYS, a sweep,
 * and what is left.
 */
describe('inbound retention, against a real PostgreSQL', () => {
  let db: TestDatabase;
  let config: InboundConfig;
  let sql: DataSource;
  const apps: INestApplication[] = [];
  const clock = new ManualClock(new Date('2026-12-01T12:00:00Z'));
  const scope = issueWorkspaceScope('retention-a');

  /** A replica of the service on the test database, its sweeps left to the test. */
  async function replica(): Promise<{ retention: InboundRetention; events: InboundEventsRepository }> {
    const app = await createInboundApp(config, { clock });
    await app.init();
    apps.push(app);
    return { retention: app.get(InboundRetention), events: app.get(InboundEventsRepository) };
  }

  beforeAll(async () => {
    db = await createTestDatabase('strata_inbound_retention');
    config = loadConfig(InboundConfig, {
      ...process.env,
      STRATA_ENV: 'development',
      DATABASE_URL: db.url,
      NATS_PREFIX: testNatsPrefix(),
      INBOUND_SWEEPER_ENABLED: 'false',
      INBOUND_EVENT_RETENTION_DAYS: '30',
    });
    await migrateInbound(config);
    sql = new DataSource({ type: 'postgres', url: db.url, extra: { max: 4 } });
    await sql.initialize();
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await sql?.destroy();
    await db?.drop();
  });

  /** An arrival stored as the capture stores it, received `ageMs` before the clock; its id. */
  async function arrival(events: InboundEventsRepository, ageMs: number): Promise<string> {
    const id = `evt_${randomUUID()}`;
    const { stored } = await events.insert(scope, {
      id,
      triggerId: randomUUID(),
      functionId: randomUUID(),
      sourceName: 'test',
      signatureResult: 'unsigned',
      signatureScheme: null,
      dispatchStatus: 'received',
      dispatchError: null,
      correlationId: randomUUID(),
      replayedFrom: null,
      payload: 'sealed',
      headers: 'sealed',
      keyVersion: 1,
      contentType: 'application/json',
      bodyBytes: 2,
      runId: null,
      jobId: randomUUID(),
      persistStatus: null,
      persistedRecordId: null,
      persistError: null,
      receivedAt: new Date(clock.now().getTime() - ageMs),
      dispatchedAt: null,
      deliveryId: null,
    });
    expect(stored).toBe(true);
    return id;
  }

  const left = async (ids: string[]) => ({
    arrivals: Number(
      (
        await sql.query<{ n: string }[]>('SELECT count(*) AS n FROM inbound.inbound_events WHERE id = ANY($1)', [ids])
      )[0]!.n,
    ),
    undispatched: Number(
      (
        await sql.query<{ n: string }[]>('SELECT count(*) AS n FROM inbound.undispatched_events WHERE id = ANY($1)', [
          ids,
        ])
      )[0]!.n,
    ),
  });

  it('deletes arrivals received more than INBOUND_EVENT_RETENTION_DAYS ago, with their entry in the dispatch list', async () => {
    const { retention, events } = await replica();
    const old = [await arrival(events, 31 * DAY_MS), await arrival(events, 30 * DAY_MS + 1000)];
    const recent = [await arrival(events, 29 * DAY_MS), await arrival(events, 1000)];

    expect((await retention.sweep())['inbound.inbound_events']).toBe(2);
    expect(await left(old)).toEqual({ arrivals: 0, undispatched: 0 });
    expect(await left(recent)).toEqual({ arrivals: 2, undispatched: 2 });

    clock.advance(2 * DAY_MS);
    expect((await retention.sweep())['inbound.inbound_events']).toBe(1);
    expect(await left(recent)).toEqual({ arrivals: 1, undispatched: 1 });
  });

  it('deletes plain HMAC signature claims whose window has ended', async () => {
    const { retention } = await replica();
    const claim = (key: string, endsInMs: number) =>
      sql.query(
        `INSERT INTO inbound.signature_claims (workspace_slug, trigger_id, signature_key, inbound_event_id, claimed_at, expires_at)
         VALUES ('retention-a', gen_random_uuid(), $1, 'ievt_' || $1, $2, $3)`,
        [key, new Date(clock.now().getTime() - 3_600_000), new Date(clock.now().getTime() + endsInMs)],
      );
    await claim('ended', -1000);
    await claim('ends-now', 0);
    await claim('open', 1000);

    expect((await retention.sweep())['inbound.signature_claims']).toBe(2);
    expect(
      (await sql.query<{ signature_key: string }[]>('SELECT signature_key FROM inbound.signature_claims')).map(
        (r) => r.signature_key,
      ),
    ).toEqual(['open']);
  });

  it('two replicas sweeping at once share the arrivals: each goes once, none fails, none waits for one another holds', async () => {
    const [a, b] = [await replica(), await replica()];
    await sql.query('DELETE FROM inbound.undispatched_events');
    await sql.query('DELETE FROM inbound.inbound_events');
    const ids: string[] = [];
    for (let i = 0; i < 1_200; i++) ids.push(await arrival(a.events, 40 * DAY_MS + i));
    const holder = sql.createQueryRunner();
    await holder.startTransaction();
    await holder.query('SELECT id FROM inbound.inbound_events WHERE id = ANY($1) FOR UPDATE', [[ids[3], ids[1100]]]);
    const locks = watchLockWaits(sql);
    try {
      const swept = Promise.all([a.retention.sweep(), b.retention.sweep()]);
      const first = await Promise.race([swept, locks.waited]);
      expect(first).not.toBe(true); // true: a sweep queued behind the held arrivals
      const [byA, byB] = await swept;
      expect(byA['inbound.inbound_events']! + byB['inbound.inbound_events']!).toBe(1_198);
      expect((await left(ids)).arrivals).toBe(2);
    } finally {
      locks.stop();
      await holder.rollbackTransaction();
      await holder.release();
    }
    expect((await a.retention.sweep())['inbound.inbound_events']).toBe(2);
  });
});
