import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import pg from 'pg';
import { recordEventsStream } from '@strata/contracts';
import { ensureStream, publishAll } from '@strata/events';
import { eventually } from '@strata/testing';
import { adminWorkspaceToken, call, EventCollector, startStack, type Stack } from '@strata/testkit';

let stack: Stack;
let events: EventCollector;
let db: pg.Client;
const ws = `outbox-${Date.now().toString(36)}`;
let token: string;

beforeAll(async () => {
  // The serving replica never relays: the outbox keeps everything until a relay runs.
  stack = await startStack({ DATA_OUTBOX_RELAY_ENABLED: 'false' });
  token = await adminWorkspaceToken(stack, ws);
  db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
});

afterAll(async () => {
  await events?.stop();
  await db?.end();
  await stack?.stop();
});

describe('the event outbox', () => {
  it('loses no event when the relay dies between publishing and committing, and delivers it once', async () => {
    const base = `${stack.baseUrl}/data/workspace/${ws}/api/v1`;
    const c = await call('POST', `${base}/structures`, { token, body: { name: 'Things', properties: [] } });
    const created = await call('POST', `${base}/records`, { token, body: { structureId: c.body.id, data: {} } });
    expect(created.status).toBe(201);

    // Committed with the record, not yet published.
    const pending = await db.query<{ id: string; subject: string; payload: string }>(
      'SELECT id, subject, payload::text AS payload FROM data.outbox',
    );
    expect(pending.rows).toHaveLength(1);
    const row = pending.rows[0]!;

    // A relay publishes the row and dies before its transaction (which deletes the row) commits.
    const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
    const stream = recordEventsStream(stack.natsPrefix);
    // The stream as the services make it (the webhooks consumer may have made it already).
    await ensureStream(nc, stream);
    await publishAll(nc, [{ subject: row.subject, payload: row.payload, msgId: row.id }]);
    events = await EventCollector.start(stack.natsPrefix);

    // A new replica with a relay takes over: it publishes the row again and deletes it.
    const replica = await stack.startDataReplica({ DATA_OUTBOX_RELAY_ENABLED: 'true', DATA_OUTBOX_INTERVAL_MS: '50' });
    try {
      await eventually(async () => {
        const left = await db.query('SELECT 1 FROM data.outbox');
        return left.rowCount === 0 ? true : undefined;
      });
    } finally {
      await replica.close();
    }
    // The stream kept one message for the subject: the second publish was dropped as a duplicate.
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(stream.name, { subjects_filter: row.subject });
    expect(info.state.subjects?.[row.subject]).toBe(1);
    const seen = await events.waitFor((e) => e.msgId === row.id);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.payload).toMatchObject({ event: 'record_created', recordId: created.body.id });
    await nc.close();
  });

  it('has the replica that wrote an event publish it at once, without waiting for its poll', async () => {
    // A replica whose relay polls once a minute: only the wake after its own write can make it publish sooner.
    // Each wait below allows half that minute: room for a busy machine, and still shorter than the poll.
    const replica = await stack.startDataReplica({
      DATA_OUTBOX_RELAY_ENABLED: 'true',
      DATA_OUTBOX_INTERVAL_MS: '60000',
    });
    try {
      const base = `${await replica.getUrl()}/data/workspace/${ws}/api/v1`;
      // Let the replica's first pass (at start) run, so that its next poll is a minute away.
      await eventually(async () => {
        const left = await db.query('SELECT 1 FROM data.outbox');
        return left.rowCount === 0 ? true : undefined;
      });
      const c = await call('POST', `${base}/structures`, { token, body: { name: 'Woken', properties: [] } });
      const created = await call('POST', `${base}/records`, { token, body: { structureId: c.body.id, data: {} } });
      expect(created.status).toBe(201);
      const seen = await events.waitFor(
        (e) =>
          e.payload.event === 'record_created' && 'recordId' in e.payload && e.payload.recordId === created.body.id,
        1,
        30_000,
      );
      expect(seen).toHaveLength(1);
      // A refused write wakes the relay too: its record_created_failed event leaves as promptly.
      const refused = await call('POST', `${base}/records`, {
        token,
        body: { structureId: c.body.id, data: { unknown: true } },
      });
      expect(refused.status).toBe(400);
      const failed = await events.waitFor(
        (e) => e.payload.event === 'record_created_failed' && e.payload.recordSlug === c.body.recordSlug,
        1,
        30_000,
      );
      expect(failed).toHaveLength(1);
    } finally {
      await replica.close();
    }
  });
});
