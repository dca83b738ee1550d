import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { issueWorkspaceScope, serviceDataSourceOptions } from '@strata/db';
import { loadConfig } from '@strata/platform';
import { createTestDatabase, type TestDatabase } from '@strata/testing';
import { INBOUND_ENTITIES } from '../src/app.module.js';
import { migrateInbound } from '../src/create-inbound-app.js';
import { InboundEventsRepository } from '../src/events/inbound-events.repository.js';
import type { PersistStatus } from '../src/events/inbound-event.entity.js';
import { InboundConfig } from '../src/inbound.config.js';
import { INBOUND_SCHEMA, MIGRATIONS } from '../src/migrations/index.js';

/**
 * An arrival gets one auto-persist attempt, whoever dispatches it: the request
 * that captured it and the sweep can both hold it as `pending`, and only one of
 * them may write the record.
 */
describe("an arrival's one auto-persist attempt, against a real PostgreSQL", () => {
  let db: TestDatabase;
  let ds: DataSource;
  let events: InboundEventsRepository;
  const scope = issueWorkspaceScope('persist-a');

  beforeAll(async () => {
    db = await createTestDatabase('strata_inbound_test');
    const config = loadConfig(InboundConfig, { ...process.env, STRATA_ENV: 'development', DATABASE_URL: db.url });
    await migrateInbound(config);
    ds = new DataSource(
      serviceDataSourceOptions({
        url: db.url,
        schema: INBOUND_SCHEMA,
        entities: INBOUND_ENTITIES,
        migrations: MIGRATIONS,
        poolSize: 8,
      }),
    );
    await ds.initialize();
    events = new InboundEventsRepository(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  async function arrival(persistStatus: PersistStatus | null): Promise<string> {
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
      persistStatus,
      persistedRecordId: null,
      persistError: null,
      receivedAt: new Date('2026-11-26T07:00:00Z'),
      dispatchedAt: null,
      deliveryId: null,
    });
    expect(stored).toBe(true);
    return id;
  }

  it('of eight callers taking it at once, exactly one has it', async () => {
    const id = await arrival('pending');
    const taken = await Promise.all(Array.from({ length: 8 }, () => events.takePersist(scope, id)));
    expect(taken.filter(Boolean)).toHaveLength(1);
    expect((await events.find(scope, id))?.persistStatus).toBe('attempted');
  });

  it('an arrival whose attempt was taken, or that does not persist, gives none', async () => {
    const taken = await arrival('pending');
    expect(await events.takePersist(scope, taken)).toBe(true);
    expect(await events.takePersist(scope, taken)).toBe(false);
    expect(await events.takePersist(scope, await arrival(null))).toBe(false);
  });

  it("another workspace's caller never takes it", async () => {
    const id = await arrival('pending');
    expect(await events.takePersist(issueWorkspaceScope('persist-b'), id)).toBe(false);
    expect(await events.takePersist(scope, id)).toBe(true);
  });
});
