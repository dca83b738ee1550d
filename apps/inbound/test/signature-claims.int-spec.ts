import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { issueWorkspaceScope, serviceDataSourceOptions } from '@strata/db';
import { newInboundEventId } from '@strata/crypto';
import { loadConfig } from '@strata/platform';
import { createTestDatabase, type TestDatabase } from '@strata/testing';
import { INBOUND_ENTITIES } from '../src/app.module.js';
import { migrateInbound } from '../src/create-inbound-app.js';
import { InboundEventsRepository, type SignatureClaim } from '../src/events/inbound-events.repository.js';
import { InboundConfig } from '../src/inbound.config.js';
import { INBOUND_SCHEMA, MIGRATIONS } from '../src/migrations/index.js';

/**
 * A verified plain HMAC arrival is stored only with its signature's claim, in one
 * statement: two replicas storing copies at once store one, a claim past its window is
 * taken over, a claim whose arrival is gone holds nothing, and the sweep deletes claims
 * past their window in batches.
 */
describe('plain HMAC signature claims, against a real PostgreSQL', () => {
  let db: TestDatabase;
  const sources: DataSource[] = [];
  let replicas: InboundEventsRepository[];
  const scope = issueWorkspaceScope('claims-a');
  const at = new Date('2026-11-28T09:00:00Z');
  const hour = 3_600_000;

  beforeAll(async () => {
    db = await createTestDatabase('strata_inbound_test');
    const config = loadConfig(InboundConfig, { ...process.env, STRATA_ENV: 'development', DATABASE_URL: db.url });
    await migrateInbound(config);
    // Two replicas: a data source and a repository (its own store batches) each.
    for (let i = 0; i < 2; i++) {
      const ds = new DataSource(
        serviceDataSourceOptions({
          url: db.url,
          schema: INBOUND_SCHEMA,
          entities: INBOUND_ENTITIES,
          migrations: MIGRATIONS,
          poolSize: 8,
        }),
      );
      await ds.initialize();
      sources.push(ds);
    }
    replicas = sources.map((ds) => new InboundEventsRepository(ds));
  });

  afterAll(async () => {
    for (const ds of sources) await ds.destroy();
    await db?.drop();
  });

  const arrival = (triggerId: string, receivedAt: Date) => ({
    id: newInboundEventId(),
    triggerId,
    functionId: randomUUID(),
    sourceName: 'github',
    signatureResult: 'verified' as const,
    signatureScheme: 'hmac-sha256',
    dispatchStatus: 'received' as const,
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
    receivedAt,
    dispatchedAt: null,
    deliveryId: null,
  });
  const claimUntil = (key: string, expiresAt: Date): SignatureClaim => ({ key, expiresAt });

  it('of sixteen copies stored at once on two replicas, one is stored and every copy is answered with it', async () => {
    const triggerId = randomUUID();
    const claim = claimUntil('hmac-sha256:burst', new Date(at.getTime() + hour));
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => replicas[i % 2]!.insert(scope, arrival(triggerId, at), claim)),
    );
    expect(answers.filter((a) => a.stored)).toHaveLength(1);
    const first = answers.find((a) => a.stored)!.event.id;
    expect(new Set(answers.map((a) => a.event.id))).toEqual(new Set([first]));
    const { rows } = await pg(`SELECT count(*)::int AS n FROM inbound.inbound_events WHERE trigger_id = $1`, [
      triggerId,
    ]);
    expect(rows[0].n).toBe(1);
    // Another trigger, or another signature, is a claim of its own.
    expect((await replicas[0]!.insert(scope, arrival(randomUUID(), at), claim)).stored).toBe(true);
    const other = claimUntil('hmac-sha256:other', claim.expiresAt);
    expect((await replicas[0]!.insert(scope, arrival(triggerId, at), other)).stored).toBe(true);
  });

  it('takes a claim over once its window has ended, and not a moment before', async () => {
    const triggerId = randomUUID();
    const end = new Date(at.getTime() + hour);
    const first = await replicas[0]!.insert(scope, arrival(triggerId, at), claimUntil('hmac-sha256:w', end));
    const before = await replicas[1]!.insert(
      scope,
      arrival(triggerId, new Date(end.getTime() - 1)),
      claimUntil('hmac-sha256:w', new Date(end.getTime() - 1 + hour)),
    );
    expect(before).toMatchObject({ stored: false, event: { id: first.event.id } });
    const after = await replicas[1]!.insert(
      scope,
      arrival(triggerId, end),
      claimUntil('hmac-sha256:w', new Date(end.getTime() + hour)),
    );
    expect(after.stored).toBe(true);
    const { rows } = await pg(
      `SELECT inbound_event_id, expires_at FROM inbound.signature_claims WHERE trigger_id = $1`,
      [triggerId],
    );
    expect(rows).toEqual([{ inbound_event_id: after.event.id, expires_at: new Date(end.getTime() + hour) }]);
  });

  it('stores an arrival whose claim is held by an arrival that no longer exists', async () => {
    const triggerId = randomUUID();
    const claim = claimUntil('hmac-sha256:orphan', new Date(at.getTime() + hour));
    const first = await replicas[0]!.insert(scope, arrival(triggerId, at), claim);
    await replicas[0]!.remove(scope, first.event.id);
    const again = await replicas[0]!.insert(scope, arrival(triggerId, at), claim);
    expect(again.stored).toBe(true);
  });

  it('deletes every claim past its window in one sweep of batches, and keeps the others', async () => {
    await pg(
      `INSERT INTO inbound.signature_claims (workspace_slug, trigger_id, signature_key, inbound_event_id, claimed_at, expires_at)
       SELECT 'claims-b', $1, 'hmac-sha256:old-' || n, 'ievt_old' || n, $2, $3 FROM generate_series(1, 2503) AS n`,
      [randomUUID(), new Date(at.getTime() - 2 * hour), new Date(at.getTime() - hour)],
    );
    await pg(
      `INSERT INTO inbound.signature_claims (workspace_slug, trigger_id, signature_key, inbound_event_id, claimed_at, expires_at)
       VALUES ('claims-b', $1, 'hmac-sha256:ends-now', 'ievt_now', $2, $3),
              ('claims-b', $1, 'hmac-sha256:open', 'ievt_open', $2, $4)`,
      [randomUUID(), new Date(at.getTime() - hour), at, new Date(at.getTime() + 1)],
    );
    let deleted = 0;
    for (;;) {
      const n = await replicas[0]!.deleteExpiredClaims(at, 1000);
      expect(n).toBeLessThanOrEqual(1000);
      deleted += n;
      if (n < 1000) break;
    }
    expect(deleted).toBe(2504);
    const { rows } = await pg(`SELECT signature_key FROM inbound.signature_claims WHERE workspace_slug = 'claims-b'`);
    expect(rows).toEqual([{ signature_key: 'hmac-sha256:open' }]);
  });

  function pg(sql: string, params: unknown[] = []): Promise<{ rows: any[] }> {
    return sources[0]!.query(sql, params).then((rows: any[]) => ({ rows }));
  }
});
