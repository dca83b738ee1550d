import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import pg from 'pg';
import { routedDurableName, routedRecordEventsStream } from '@strata/contracts';
import { ManualClock, eventually } from '@strata/testing';
import { adminWorkspaceToken, serviceAccountToken, startStack, type Stack } from '@strata/testkit';
import { Receivers, header, type Arrival } from './support/webhook-receiver.js';
import {
  RETRY_DELAYS_MS,
  SHORT_TIMEOUT,
  WEBHOOK_TEST_SETTINGS,
  attemptsRecorded,
  createCollection,
  createRecord,
  createSubscription,
  deliveryStatus,
  settled,
  workspaceApi,
  type WorkspaceApi,
} from './support/webhooks.js';

let stack: Stack;
let api: WorkspaceApi;
let adminToken: string;
let db: pg.Client;
let nc: NatsConnection;
const receivers = new Receivers();
const ws = `resilient-${Date.now().toString(36)}`;
/** The webhooks service's clock (every replica's and restart's): time moves only when a test moves it. */
const clock = new ManualClock();

beforeAll(async () => {
  stack = await startStack(WEBHOOK_TEST_SETTINGS, { clocks: { webhooks: clock } });
  adminToken = await adminWorkspaceToken(stack, ws);
  api = workspaceApi(stack, ws, adminToken);
  db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
  nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
});

let collections = 0;

/**
 * A collection of the test's own and a subscription to its record_created events: no
 * other test's records reach the test's receiver.
 */
async function subscribed(url: string) {
  const collection = await createCollection(api, `Shipments ${++collections}`);
  const sub = await createSubscription(api, { url, events: ['record_created'], recordSlugs: [collection.recordSlug] });
  return { sub, collection };
}

afterAll(async () => {
  await nc?.close();
  await db?.end();
  // Receivers first: an attempt still in flight then ends at once instead of holding the shutdown.
  await receivers.stopAll();
  await stack?.stop();
});

const waitForStatus = (subscriptionId: string, deliveryId: string, status: string) =>
  deliveryStatus(api, subscriptionId, deliveryId, status);

async function onlyDelivery(subscriptionId: string) {
  return eventually(async () => {
    const list = await api('GET', `/webhook-subscriptions/${subscriptionId}/deliveries`);
    return list.body.data.length === 1 ? list.body.data[0] : undefined;
  });
}

describe('webhook deliveries across restarts, replicas and rotations', () => {
  it('keeps a pending retry through a service restart and sends the next attempt once', async () => {
    const hook = await receivers.start();
    let healthy = false;
    hook.reply = () => (healthy ? { status: 200 } : { status: 500 });
    const { sub, collection } = await subscribed(hook.url());
    hook.trust('current', sub.secret);
    await createRecord(api, collection.id, { title: 'survives a restart' });
    const [first] = await hook.waitFor(() => true);
    const id = header(first!, 'webhook-id')!;
    await attemptsRecorded(api, sub.id, id, 1);
    await stack.stopWebhooks();
    healthy = true;
    // Attempt 2 comes due while no replica runs.
    clock.advance(RETRY_DELAYS_MS[0]);
    const due = await db.query(
      "SELECT 1 FROM webhooks.deliveries WHERE id = $1 AND status = 'retrying' AND next_attempt_at <= $2",
      [id, clock.now()],
    );
    expect(due.rowCount).toBe(1);
    expect(hook.of(id)).toHaveLength(1);
    await stack.restartWebhooks();

    const done = await waitForStatus(sub.id, id, 'success');
    expect(done.attemptCount).toBe(2);
    expect(hook.of(id).map((a) => header(a, 'Svc-Retry-Attempt'))).toEqual([undefined, '2']);
    expect(hook.of(id).every((a) => a.verifiedBy.includes('current'))).toBe(true);
  });

  it('makes no second delivery when the consumer loses its place and every event is read again', async () => {
    const hook = await receivers.start();
    const { sub, collection } = await subscribed(hook.url());
    await createRecord(api, collection.id, { title: 'read twice' });
    await onlyDelivery(sub.id);
    const count = async () =>
      (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhooks.deliveries')).rows[0]!.n;
    const before = await count();

    await stack.stopWebhooks();
    const jsm = await jetstreamManager(nc);
    const routed = routedRecordEventsStream(stack.natsPrefix).name;
    await jsm.consumers.delete(routed, routedDurableName(stack.natsPrefix, 'webhooks'));
    await stack.restartWebhooks();
    // The new durable consumer starts from the stream's first routed event: wait until it has read them all.
    await eventually(async () => {
      const info = await jsm.consumers.info(routed, routedDurableName(stack.natsPrefix, 'webhooks'));
      return info.num_pending === 0 && info.num_ack_pending === 0 ? true : undefined;
    });
    expect(await count()).toBe(before);
    await settled(stack, api, sub.id);
    expect(hook.arrivals).toHaveLength(1);
  });

  it('recovers an attempt whose replica died mid-attempt: logged as interrupted, the next attempt sent once', async () => {
    await stack.restartWebhooks({ WEBHOOKS_DISPATCHER_ENABLED: 'false' });
    const hook = await receivers.start();
    const { sub, collection } = await subscribed(hook.url());
    hook.trust('current', sub.secret);
    await createRecord(api, collection.id, { title: 'claimed by a dead replica' });
    const pending = await onlyDelivery(sub.id);
    expect(pending).toMatchObject({ status: 'retrying', attemptCount: 0 });
    // A replica claimed attempt 1 (counted and leased until 30 s later) and died before recording anything.
    await db.query(
      `UPDATE webhooks.deliveries SET attempt_count = 1, leased = true, next_attempt_at = $2::timestamptz + interval '30 seconds'
        WHERE id = $1`,
      [pending.id, clock.now()],
    );
    await stack.restartWebhooks();
    // The lease runs out: attempt 1 counts as interrupted, attempt 2 is due.
    clock.advance(30_000);
    const done = await waitForStatus(sub.id, pending.id, 'success');
    expect(done.attemptCount).toBe(2);
    expect(done.attempts.map((a: { attempt: number; outcome: string }) => [a.attempt, a.outcome])).toEqual([
      [1, 'interrupted'],
      [2, 'success'],
    ]);
    expect(hook.of(pending.id).map((a) => header(a, 'Svc-Retry-Attempt'))).toEqual(['2']);
  });

  it('keeps retrying while the receiver is down and delivers when it is back', async () => {
    const hook = await receivers.start();
    hook.reply = () => ({ status: 500 });
    const { sub, collection } = await subscribed(hook.url());
    await createRecord(api, collection.id, { title: 'receiver restarts' });
    const [first] = await hook.waitFor(() => true);
    const id = header(first!, 'webhook-id')!;
    await attemptsRecorded(api, sub.id, id, 1);
    await hook.stop();
    clock.advance(RETRY_DELAYS_MS[0]);
    const down = await attemptsRecorded(api, sub.id, id, 2);
    expect(down.attempts[1].error).toContain('ECONNREFUSED');
    hook.reply = () => ({ status: 200 });
    await hook.listen();
    clock.advance(RETRY_DELAYS_MS[1]);
    const done = await waitForStatus(sub.id, id, 'success');
    expect(done.attempts[0]).toMatchObject({ outcome: 'failure', httpStatus: 500 });
    expect(done.attempts[1]).toMatchObject({ outcome: 'failure', httpStatus: null });
  });

  it('shares the work between two replicas without sending any attempt twice', async () => {
    const replica = await stack.startWebhooksReplica();
    try {
      const hook = await receivers.start();
      const { sub, collection } = await subscribed(hook.url());
      hook.trust('current', sub.secret);
      const res = await api('POST', '/records/batch', {
        structureId: collection.id,
        records: Array.from({ length: 40 }, (_, i) => ({ data: { title: `r${i}` } })),
      });
      expect(res.body).toMatchObject({ created: 40 });
      await hook.waitFor(() => true, 40);
      await settled(stack, api, sub.id);
      // Each replica that sent an attempt recorded it: one attempt row per delivery means one send each.
      const attempts = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM webhooks.delivery_attempts WHERE subscription_id = $1',
        [sub.id],
      );
      expect(attempts.rows[0]!.n).toBe(40);
      const ids = hook.arrivals.map((a) => header(a, 'webhook-id'));
      expect(ids).toHaveLength(40);
      expect(new Set(ids).size).toBe(40);
      expect(hook.arrivals.every((a) => a.verifiedBy.includes('current'))).toBe(true);
    } finally {
      await replica.close();
    }
  });

  it('signs with the new and the previous secret during the grace, then with the new one only', async () => {
    const hook = await receivers.start();
    const { sub, collection } = await subscribed(hook.url());
    hook.trust('previous', sub.secret);
    const rotated = await api('POST', `/webhook-subscriptions/${sub.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(Date.parse(rotated.body.previousSecretValidUntil)).toBe(clock.now().getTime() + 24 * 3600_000);
    hook.trust('new', rotated.body.secret);

    await createRecord(api, collection.id, { title: 'during the grace' });
    const [during] = await hook.waitFor(() => true);
    expect(during!.verifiedBy.sort()).toEqual(['new', 'previous']);
    expect(header(during!, 'webhook-signature')!.split(' ')).toHaveLength(2);

    // Still within the grace a millisecond before its end; over at its end.
    const listed = async () =>
      (await api('GET', '/webhook-subscriptions')).body.data.find((s: { id: string }) => s.id === sub.id);
    clock.advance(24 * 3600_000 - 1);
    expect((await listed()).previousSecretValidUntil).toBe(rotated.body.previousSecretValidUntil);
    clock.advance(1);
    expect((await listed()).previousSecretValidUntil).toBeNull();
    await createRecord(api, collection.id, { title: 'after the grace' });
    const [, after] = await hook.waitFor(() => true, 2);
    expect(after!.verifiedBy).toEqual(['new']);
    expect(header(after!, 'webhook-signature')!.split(' ')).toHaveLength(1);
  });

  it('cancels and replays with the scopes, answering 409 for a retrying or orphaned original', async () => {
    const unscoped = workspaceApi(
      stack,
      ws,
      await serviceAccountToken(stack, ws, adminToken, {
        name: 'hooks-no-scope',
        resource: 'webhook-subscriptions',
        actions: ['manage'],
      }),
    );
    // Neither the permission nor the scope: told of the permission first, which an administrator grants.
    const reader = workspaceApi(
      stack,
      ws,
      await serviceAccountToken(stack, ws, adminToken, {
        name: 'hooks-reader',
        resource: 'webhook-subscriptions',
        actions: ['retrieve'],
      }),
    );
    const scoped = workspaceApi(
      stack,
      ws,
      await serviceAccountToken(stack, ws, adminToken, {
        name: 'hooks-scoped',
        resource: 'webhook-subscriptions',
        actions: ['manage'],
        scope: 'webhooks:replay webhooks:cancel',
      }),
    );

    const hook = await receivers.start();
    hook.reply = () => 'hang';
    const { sub, collection } = await subscribed(hook.url());
    hook.trust('current', sub.secret);
    // Attempt 1 never gets an answer: a short timeout for it alone (no answering receiver races it).
    await stack.restartWebhooks(SHORT_TIMEOUT);
    let arrival: Arrival;
    let id: string;
    let after;
    try {
      await createRecord(api, collection.id, { title: 'cancel me' });
      arrival = (await hook.waitFor(() => true))[0]!;
      id = header(arrival, 'webhook-id')!;
      // Still retrying (attempt 1 hangs or has failed; attempt 2 is 30 s away on the clock): no replay.
      const early = await scoped('POST', `/webhook-subscriptions/deliveries/${id}/retry`);
      expect(early.status).toBe(409);
      const noScope = await unscoped('POST', `/webhook-subscriptions/deliveries/${id}/cancel`);
      expect(noScope.status).toBe(403);
      expect(noScope.body.message).toContain('webhooks:cancel');
      const neither = await reader('POST', `/webhook-subscriptions/deliveries/${id}/cancel`);
      expect(neither.status).toBe(403);
      expect(neither.body.message).toMatch(/^Missing permission: webhook-subscriptions:/);

      const cancelled = await scoped('POST', `/webhook-subscriptions/deliveries/${id}/cancel`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({
        id,
        status: 'failed',
        lastError: 'Cancelled by user',
        nextAttemptAt: null,
      });
      expect((await scoped('POST', `/webhook-subscriptions/deliveries/${id}/cancel`)).status).toBe(409);
      // The attempt times out (if it had not yet) and is logged; the delivery stays cancelled.
      after = await attemptsRecorded(api, sub.id, id, 1);
    } finally {
      await stack.restartWebhooks();
    }
    expect(after).toMatchObject({ status: 'failed', lastError: 'Cancelled by user', nextAttemptAt: null });
    expect(after.attempts).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'failure', error: 'Timed out after 1000 ms' }),
    ]);
    // Nothing more is due, however long one waits.
    clock.advance(RETRY_DELAYS_MS[0]);
    await settled(stack, api, sub.id);
    expect(hook.of(id)).toHaveLength(1);

    hook.reply = () => ({ status: 200 });
    expect((await unscoped('POST', `/webhook-subscriptions/deliveries/${id}/retry`)).status).toBe(403);
    const replay = await scoped('POST', `/webhook-subscriptions/deliveries/${id}/retry`);
    expect(replay.status).toBe(201);
    expect(replay.body).toMatchObject({ replayedFrom: id, status: 'retrying', event: 'record_created' });
    const done = await waitForStatus(sub.id, replay.body.id, 'success');
    const [resent] = hook.of(replay.body.id);
    expect(resent!.rawBody).toBe(arrival.rawBody);
    expect(resent!.verifiedBy).toEqual(['current']);
    expect(done.replayedFrom).toBe(id);

    expect(
      (await scoped('POST', '/webhook-subscriptions/deliveries/00000000-0000-4000-8000-000000000000/retry')).status,
    ).toBe(404);
    expect((await api('DELETE', `/webhook-subscriptions/${sub.id}`)).status).toBe(204);
    const orphan = await scoped('POST', `/webhook-subscriptions/deliveries/${id}/retry`);
    expect(orphan.status).toBe(409);
    expect(orphan.body.message).toContain('deleted');
  });

  it('stops the retries of a deleted subscription', async () => {
    const hook = await receivers.start();
    hook.reply = () => ({ status: 500 });
    const { sub, collection } = await subscribed(hook.url());
    await createRecord(api, collection.id, { title: 'orphaned' });
    const [arrival] = await hook.waitFor(() => true);
    expect((await api('DELETE', `/webhook-subscriptions/${sub.id}`)).status).toBe(204);
    const row = await db.query<{ status: string; last_error: string }>(
      'SELECT status, last_error FROM webhooks.deliveries WHERE id = $1',
      [header(arrival!, 'webhook-id')],
    );
    expect(row.rows[0]).toEqual({ status: 'failed', last_error: 'Subscription deleted' });
    // Attempt 1's outcome is logged, and no further attempt is claimed for it, even once one would be due.
    await eventually(async () => {
      const logged = await db.query('SELECT 1 FROM webhooks.delivery_attempts WHERE delivery_id = $1', [
        header(arrival!, 'webhook-id'),
      ]);
      return logged.rowCount === 1 ? true : undefined;
    });
    clock.advance(RETRY_DELAYS_MS[0]);
    await settled(stack, api, sub.id);
    expect(hook.arrivals).toHaveLength(1);
  });
});
