import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ManualClock, eventually } from '@strata/testing';
import { adminWorkspaceToken, startStack, type Stack } from '@strata/testkit';
import { Receivers, header } from './support/webhook-receiver.js';
import {
  RETRY_DELAYS_MS,
  SHORT_TIMEOUT,
  WEBHOOK_TEST_SETTINGS,
  attemptsRecorded,
  createCollection,
  createRecord,
  createSubscription,
  deliveryStatus,
  runSchedule,
  settled,
  workspaceApi,
  type WorkspaceApi,
} from './support/webhooks.js';

let stack: Stack;
let api: WorkspaceApi;
let otherApi: WorkspaceApi;
/** A third workspace, sharing a receiver with `api`'s in the breaker test. */
let tenantB: WorkspaceApi;
/** The webhooks service's clock: due times, the breaker and leases move only when a test moves it. */
const clock = new ManualClock();
const receivers = new Receivers();
const suffix = Date.now().toString(36);
const ws = `deliver-${suffix}`;

beforeAll(async () => {
  stack = await startStack(WEBHOOK_TEST_SETTINGS, { clocks: { webhooks: clock } });
  api = workspaceApi(stack, ws, await adminWorkspaceToken(stack, ws));
  const other = `deliver-other-${suffix}`;
  otherApi = workspaceApi(stack, other, await adminWorkspaceToken(stack, other));
  const b = `deliver-b-${suffix}`;
  tenantB = workspaceApi(stack, b, await adminWorkspaceToken(stack, b));
});

afterAll(async () => {
  // Receivers first: an attempt still in flight then ends at once instead of holding the shutdown.
  await receivers.stopAll();
  await stack?.stop();
});

const waitForDelivery = (subscriptionId: string, deliveryId: string, status: string) =>
  deliveryStatus(api, subscriptionId, deliveryId, status);

/** A filter naming no collection: only `/test` deliveries reach such a subscription, never another test's records. */
const TEST_ONLY = ['no-such-collection'];

type Row = { id: string; status: string; attemptCount: number; httpStatus: number | null; lastError: string | null };

/** Waits until the subscription's deliveries satisfy `done`, and answers them. */
async function deliveriesOf(as: WorkspaceApi, subscriptionId: string, done: (rows: Row[]) => boolean) {
  return eventually(async () => {
    const rows = (await as('GET', `/webhook-subscriptions/${subscriptionId}/deliveries?limit=100`)).body.data as Row[];
    return done(rows) ? rows : undefined;
  }, 20_000);
}

/** `count` records in one batch. */
async function batch(as: WorkspaceApi, structureId: string, count: number, title: string) {
  const res = await as('POST', '/records/batch', {
    structureId,
    records: Array.from({ length: count }, (_, i) => ({ data: { title: `${title}${i}` } })),
  });
  expect(res.body).toMatchObject({ created: count });
}

describe('webhook deliveries', () => {
  it('delivers each matching record event once, signed and verifiable by a Standard Webhooks library', async () => {
    const hook = await receivers.start();
    hook.reply = () => ({ status: 200, body: 'x'.repeat(10_000) });
    const orders = await createCollection(api, 'Orders');
    const notes = await createCollection(api, 'Notes');
    const sub = await createSubscription(api, {
      url: hook.url('/orders'),
      events: ['record_created', 'record_updated', 'record_deleted'],
      recordSlugs: [orders.recordSlug],
    });
    hook.trust('current', sub.secret);

    const record = await createRecord(api, orders.id, { title: 'first', total: 5 });
    expect((await api('PATCH', `/records/${record.id}`, { data: { total: 7 } })).status).toBe(200);
    expect((await api('DELETE', `/records/${record.id}`)).status).toBeLessThan(300);
    await createRecord(api, notes.id, { title: 'not subscribed' });

    // Deliveries are not ordered (events are handled and sent concurrently): take them by event.
    const arrived = await hook.waitFor(() => true, 3);
    expect(arrived.map((a) => a.body['event']).sort()).toEqual(['record_created', 'record_deleted', 'record_updated']);
    const arrivals = ['record_created', 'record_updated', 'record_deleted'].map((event) =>
      arrived.find((a) => a.body['event'] === event)!,
    );
    for (const a of arrivals) {
      expect(a.verifiedBy).toEqual(['current']);
      expect(a.familiesAgree).toBe(true);
      expect(header(a, 'Svc-Event-Type')).toBe(a.body['event']);
      expect(header(a, 'Svc-Retry-Attempt')).toBeUndefined();
      expect(header(a, 'Svc-Test-Event')).toBeUndefined();
      expect(header(a, 'X-Signature')).toBeUndefined();
      expect(header(a, 'webhook-signature')).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    }
    expect(arrivals[0]!.body).toEqual({
      event: 'record_created',
      workspaceSlug: ws,
      recordSlug: orders.recordSlug,
      recordId: record.id,
      data: { id: record.id, recordSlug: orders.recordSlug, data: { title: 'first', total: 5 } },
      timestamp: expect.any(String),
      createdBy: expect.any(String),
    });
    expect(arrivals[1]!.body).toMatchObject({
      data: { data: { title: 'first', total: 7 } },
      updatedBy: expect.any(String),
    });
    expect(arrivals[2]!.body).toMatchObject({ recordId: record.id, deletedBy: expect.any(String) });
    // Nothing for the collection the subscription does not name, nor twice for anything.
    await settled(stack, api, sub.id);
    expect(hook.arrivals).toHaveLength(3);

    // The list omits payloads; the detail holds what was sent and the (truncated) answer.
    const list = await api('GET', `/webhook-subscriptions/${sub.id}/deliveries`);
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(3);
    expect(list.body.pagination).toEqual({ limit: 50, offset: 0, hasMore: false });
    for (const row of list.body.data) {
      expect(row).toMatchObject({ status: 'success', httpStatus: 200, attemptCount: 1, lastError: null });
      expect(row).not.toHaveProperty('requestPayload');
      expect(row).not.toHaveProperty('responseBody');
    }
    const created = list.body.data.find((d: { event: string }) => d.event === 'record_created');
    const detail = await api('GET', `/webhook-subscriptions/${sub.id}/deliveries/${created.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.requestPayload).toEqual(arrivals[0]!.body);
    expect(detail.body.responseBody).toBe('x'.repeat(4096));
    expect(detail.body.requestHeaders['webhook-signature']).toBe(header(arrivals[0]!, 'webhook-signature'));
    expect(detail.body.requestHeaders['webhook-id']).toBe(created.id);
    expect(detail.body.attempts).toEqual([
      {
        attempt: 1,
        outcome: 'success',
        httpStatus: 200,
        error: null,
        durationMs: expect.any(Number),
        at: expect.any(String),
      },
    ]);
    expect(JSON.stringify(detail.body)).not.toContain(sub.secret.slice(6));
  });

  it('delivers records_bulk_created once per bulk operation, with the ids', async () => {
    const hook = await receivers.start();
    const items = await createCollection(api, 'Bulk items');
    const sub = await createSubscription(api, {
      url: hook.url(),
      events: ['records_bulk_created'],
      recordSlugs: [items.recordSlug],
    });
    hook.trust('current', sub.secret);
    const res = await api('POST', '/records/bulk', {
      structureId: items.id,
      records: [{ data: { title: 'a' } }, { data: { title: 'b' } }, { data: { title: 'c' } }],
    });
    expect(res.status).toBe(200);
    const [arrival] = await hook.waitFor(() => true);
    expect(arrival!.verifiedBy).toEqual(['current']);
    expect(arrival!.body).toMatchObject({
      event: 'records_bulk_created',
      workspaceSlug: ws,
      recordSlug: items.recordSlug,
      structureId: items.id,
      count: 3,
      schemaDiscoveryMode: 'strict',
    });
    expect((arrival!.body['recordIds'] as string[]).sort()).toEqual(
      res.body.records.map((r: { id: string }) => r.id).sort(),
    );
    await settled(stack, api, sub.id);
    expect(hook.arrivals).toHaveLength(1);
  });

  it('retries a failing receiver on the schedule with the same webhook-id, fresh signatures and Svc-Retry-Attempt', async () => {
    const hook = await receivers.start();
    hook.reply = (a) => (header(a, 'Svc-Retry-Attempt') === '3' ? { status: 200 } : { status: 503 });
    const things = await createCollection(api, 'Retried things');
    const sub = await createSubscription(api, {
      url: hook.url(),
      events: ['record_created'],
      recordSlugs: [things.recordSlug],
    });
    hook.trust('current', sub.secret);
    await createRecord(api, things.id, { title: 'retry me' });

    const [first] = await hook.waitFor(() => true);
    const id = header(first!, 'webhook-id')!;
    // Attempt 1 failed: attempt 2 is due 30 s after it on the service's clock, and the clock has not moved.
    const afterFirst = await attemptsRecorded(api, sub.id, id, 1);
    expect(afterFirst).toMatchObject({
      status: 'retrying',
      attemptCount: 1,
      httpStatus: 503,
      lastError: 'Receiver answered HTTP 503',
    });
    expect(Date.parse(afterFirst.attempts[0].at)).toBe(clock.now().getTime());
    expect(Date.parse(afterFirst.nextAttemptAt)).toBe(clock.now().getTime() + RETRY_DELAYS_MS[0]);
    expect(hook.of(id)).toHaveLength(1);
    // Then 2 minutes after attempt 2.
    const done = await runSchedule(api, clock, sub.id, id);

    const arrivals = hook.of(id);
    expect(arrivals.map((a) => header(a, 'Svc-Retry-Attempt'))).toEqual([undefined, '2', '3']);
    expect(arrivals.every((a) => a.verifiedBy.includes('current') && a.familiesAgree)).toBe(true);
    expect(arrivals.map((a) => a.rawBody)).toEqual([arrivals[0]!.rawBody, arrivals[0]!.rawBody, arrivals[0]!.rawBody]);

    expect(done).toMatchObject({
      status: 'success',
      attemptCount: 3,
      httpStatus: 200,
      lastError: null,
      nextAttemptAt: null,
    });
    expect(done.attempts.map((a: { outcome: string; httpStatus: number }) => [a.outcome, a.httpStatus])).toEqual([
      ['failure', 503],
      ['failure', 503],
      ['success', 200],
    ]);
    const at = done.attempts.map((a: { at: string }) => Date.parse(a.at));
    expect([at[1] - at[0], at[2] - at[1]]).toEqual([RETRY_DELAYS_MS[0], RETRY_DELAYS_MS[1]]);
    expect(done.requestHeaders['Svc-Retry-Attempt']).toBe('3');
  });

  it('fails a delivery after the fifth attempt: 3xx, timeouts and errors all count, redirects are not followed', async () => {
    const hook = await receivers.start();
    const target = await receivers.start();
    const replies = [
      { status: 302, headers: { location: target.url('/elsewhere') } },
      { status: 500, body: 'boom' },
      { status: 404 },
      { status: 400 },
      'hang' as const,
    ];
    hook.reply = (a) => replies[Number(header(a, 'Svc-Retry-Attempt') ?? '1') - 1]!;
    const things = await createCollection(api, 'Failing things');
    const sub = await createSubscription(api, {
      url: hook.url(),
      events: ['record_created'],
      recordSlugs: [things.recordSlug],
    });
    await createRecord(api, things.id, { title: 'never delivered' });

    const [first] = await hook.waitFor(() => true);
    const id = header(first!, 'webhook-id')!;
    for (let attempt = 1; attempt <= 3; attempt++) {
      await attemptsRecorded(api, sub.id, id, attempt);
      clock.advance(RETRY_DELAYS_MS[attempt - 1]!);
    }
    await attemptsRecorded(api, sub.id, id, 4);
    // The fifth attempt gets no answer: a short timeout for it alone, so no answering receiver races it.
    await stack.restartWebhooks(SHORT_TIMEOUT);
    let failed;
    try {
      clock.advance(RETRY_DELAYS_MS[3]);
      failed = await waitForDelivery(sub.id, id, 'failed');
    } finally {
      await stack.restartWebhooks();
    }
    expect(failed).toMatchObject({
      attemptCount: 5,
      httpStatus: null,
      lastError: 'Timed out after 1000 ms',
      nextAttemptAt: null,
    });
    expect(failed.attempts.map((a: { error: string }) => a.error)).toEqual([
      'Receiver answered HTTP 302 (redirects are not followed)',
      'Receiver answered HTTP 500',
      'Receiver answered HTTP 404',
      'Receiver answered HTTP 400',
      'Timed out after 1000 ms',
    ]);
    expect(hook.arrivals).toHaveLength(5);
    expect(target.arrivals).toHaveLength(0);

    const failedList = await api('GET', '/webhook-subscriptions/deliveries/failed');
    expect(failedList.body.data.map((d: { id: string }) => d.id)).toContain(failed.id);
    expect(failedList.body.data.every((d: { status: string }) => d.status === 'failed')).toBe(true);
  });

  it('opens the circuit after half of 5+ requests fail, rejects attempts without sending them, then closes after 30 s without a request', async () => {
    const hook = await receivers.start();
    let healthy = false;
    hook.reply = () => (healthy ? { status: 200 } : { status: 500 });
    const things = await createCollection(api, 'Breaker things');
    const sub = await createSubscription(api, {
      url: hook.url(),
      events: ['record_created'],
      recordSlugs: [things.recordSlug],
    });
    hook.trust('current', sub.secret);

    // Five failed requests (the fewest that can open it, so all five are sent) open the circuit.
    await batch(api, things.id, 5, 'b');
    const failedOnce = await deliveriesOf(
      api,
      sub.id,
      (rows) => rows.length === 5 && rows.every((d) => d.httpStatus === 500),
    );
    const openedAt = clock.now().getTime();
    expect(hook.arrivals).toHaveLength(5);

    // While it is open, an attempt is rejected without a request, and consumes the attempt.
    const rejectedWhileOpen = async () => {
      const before = new Set((await deliveriesOf(api, sub.id, () => true)).map((d) => d.id));
      await createRecord(api, things.id, { title: 'while open' });
      const rows = await deliveriesOf(api, sub.id, (all) => all.some((d) => !before.has(d.id) && d.lastError !== null));
      return rows.find((d) => !before.has(d.id))!;
    };
    const early = await rejectedWhileOpen();
    expect(early).toMatchObject({
      status: 'retrying',
      attemptCount: 1,
      httpStatus: null,
      lastError: `Circuit open for ${new URL(hook.url()).origin}: attempt not sent`,
    });
    // Still open one millisecond before 30 s have passed without a request.
    clock.advance(30_000 - 1);
    const late = await rejectedWhileOpen();
    expect(late).toMatchObject({ attemptCount: 1, lastError: early.lastError });
    expect(hook.arrivals).toHaveLength(5);

    // 30 s after the last request it closes: the next attempts (due now) are sent, and succeed.
    healthy = true;
    clock.advance(1);
    expect(clock.now().getTime() - openedAt).toBe(30_000);
    await deliveriesOf(api, sub.id, (rows) => rows.filter((d) => d.status === 'success').length === 6);
    // The one rejected last is due 30 s after its rejection.
    clock.advance(RETRY_DELAYS_MS[0]);
    const done = await deliveriesOf(api, sub.id, (rows) => rows.every((d) => d.status === 'success'));
    expect(done).toHaveLength(7);

    let rejected = 0;
    let attempts = 0;
    for (const d of done) {
      const detail = await api('GET', `/webhook-subscriptions/${sub.id}/deliveries/${d.id}`);
      attempts += detail.body.attempts.length;
      rejected += detail.body.attempts.filter((a: { outcome: string }) => a.outcome === 'rejected').length;
      // Each attempt slot reached the receiver at most once.
      const slots = hook.of(d.id).map((a) => header(a, 'Svc-Retry-Attempt') ?? '1');
      expect(new Set(slots).size).toBe(slots.length);
    }
    expect(failedOnce.map((d) => d.id).every((id) => done.some((d) => d.id === id))).toBe(true);
    expect(rejected).toBe(2);
    // Rejected attempts consumed an attempt without a request.
    expect(hook.arrivals).toHaveLength(attempts - rejected);
    expect(hook.arrivals).toHaveLength(12);
  });

  it("keeps a breaker per workspace: one workspace's open circuit does not reject another's deliveries to the same receiver", async () => {
    const hook = await receivers.start();
    // One receiver origin for both workspaces: failing for A's path, answering for B's.
    hook.reply = (a) => (a.path.startsWith('/a') ? { status: 500 } : { status: 204 });
    const inA = await createCollection(api, 'Shared receiver A');
    const inB = await createCollection(tenantB, 'Shared receiver B');
    const subA = await createSubscription(api, {
      url: hook.url('/a'),
      events: ['record_created'],
      recordSlugs: [inA.recordSlug],
    });
    const subB = await createSubscription(tenantB, {
      url: hook.url('/b'),
      events: ['record_created'],
      recordSlugs: [inB.recordSlug],
    });

    await batch(api, inA.id, 5, 'a');
    await deliveriesOf(api, subA.id, (rows) => rows.length === 5 && rows.every((d) => d.httpStatus === 500));
    // A's circuit is open: A's next delivery is rejected without a request.
    await createRecord(api, inA.id, { title: 'a while open' });
    const rowsA = await deliveriesOf(api, subA.id, (rows) => rows.length === 6 && rows.every((d) => d.lastError));
    expect(rowsA.filter((d) => d.lastError?.startsWith('Circuit open')).length).toBe(1);

    // B's deliveries to the same origin go out and succeed, while A's circuit stays open (the clock has not moved).
    await batch(tenantB, inB.id, 5, 'b');
    const rowsB = await deliveriesOf(
      tenantB,
      subB.id,
      (rows) => rows.length === 5 && rows.every((d) => d.status === 'success' || d.lastError !== null),
    );
    expect(rowsB.map((d) => [d.status, d.attemptCount, d.httpStatus, d.lastError])).toEqual(
      Array.from({ length: 5 }, () => ['success', 1, 204, null]),
    );
    expect(hook.arrivals.filter((a) => a.path.startsWith('/b'))).toHaveLength(5);
    // And B's traffic neither closed A's circuit nor spent A's attempts: A's next one is rejected too.
    await createRecord(api, inA.id, { title: 'a still open' });
    const stillA = await deliveriesOf(api, subA.id, (rows) => rows.length === 7 && rows.every((d) => d.lastError));
    expect(stillA.filter((d) => d.lastError?.startsWith('Circuit open')).length).toBe(2);
    expect(hook.arrivals.filter((a) => a.path.startsWith('/a'))).toHaveLength(5);
    // A's deliveries would keep failing as later tests move the clock: stop them.
    expect((await api('DELETE', `/webhook-subscriptions/${subA.id}`)).status).toBe(204);
  });

  it('sends a test delivery through the pipeline and answers the row after the attempt', async () => {
    const hook = await receivers.start();
    const sub = await createSubscription(api, { url: hook.url(), events: ['record_created'], recordSlugs: TEST_ONLY });
    hook.trust('current', sub.secret);
    const res = await api('POST', `/webhook-subscriptions/${sub.id}/test`, {
      event: 'record_created',
      payload: { hello: 'world' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: 'success',
      httpStatus: 204,
      lastError: null,
      attemptCount: 1,
      isTest: true,
      requestPayload: { event: 'record_created', workspaceSlug: ws, data: { hello: 'world' }, isTest: true },
    });
    const [arrival] = hook.arrivals;
    expect(header(arrival!, 'Svc-Test-Event')).toBe('true');
    expect(header(arrival!, 'webhook-id')).toBe(res.body.id);
    expect(arrival!.verifiedBy).toEqual(['current']);

    hook.reply = () => ({ status: 500 });
    const failing = await api('POST', `/webhook-subscriptions/${sub.id}/test`, {
      event: 'record_created',
      payload: {},
    });
    expect(failing.body).toMatchObject({
      status: 'retrying',
      httpStatus: 500,
      lastError: 'Receiver answered HTTP 500',
    });

    const bad = await api('POST', `/webhook-subscriptions/${sub.id}/test`, { event: 'record_exploded', payload: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['event', 'payload']);
    // The failing one would be retried as later tests move the clock: stop it.
    expect((await api('DELETE', `/webhook-subscriptions/${sub.id}`)).status).toBe(204);
  });

  it('reports health: success rates, totals and the last failure', async () => {
    const hook = await receivers.start();
    const sub = await createSubscription(api, { url: hook.url(), events: ['record_created'], recordSlugs: TEST_ONLY });
    const empty = await api('GET', `/webhook-subscriptions/${sub.id}/health`);
    expect(empty.body).toEqual({
      successRate1h: null,
      successRate24h: null,
      totalDeliveries1h: 0,
      totalDeliveries24h: 0,
      lastFailureAt: null,
      lastFailureError: null,
    });
    await api('POST', `/webhook-subscriptions/${sub.id}/test`, { event: 'record_created', payload: {} });
    hook.reply = () => ({ status: 502 });
    const failing = await api('POST', `/webhook-subscriptions/${sub.id}/test`, {
      event: 'record_created',
      payload: {},
    });
    expect(failing.body).toMatchObject({ status: 'retrying', attemptCount: 1 });
    const failed = await runSchedule(api, clock, sub.id, failing.body.id);
    expect(failed.status).toBe('failed');
    const health = await api('GET', `/webhook-subscriptions/${sub.id}/health`);
    expect(health.status).toBe(200);
    expect(health.body).toEqual({
      successRate1h: 0.5,
      successRate24h: 0.5,
      totalDeliveries1h: 2,
      totalDeliveries24h: 2,
      lastFailureAt: failed.attempts[4].at,
      lastFailureError: 'Receiver answered HTTP 502',
    });
  });

  it('filters and pages delivery lists, validates their query, and keeps workspaces apart', async () => {
    const hook = await receivers.start();
    const sub = await createSubscription(api, { url: hook.url(), events: ['record_created'], recordSlugs: TEST_ONLY });
    const before = new Date().toISOString();
    for (let i = 0; i < 3; i++)
      await api('POST', `/webhook-subscriptions/${sub.id}/test`, { event: 'record_created', payload: { i } });
    const path = `/webhook-subscriptions/${sub.id}/deliveries`;
    const page = await api('GET', `${path}?limit=2&offset=1`);
    expect(page.body.data).toHaveLength(2);
    expect(page.body.pagination).toEqual({ limit: 2, offset: 1, hasMore: false });
    expect((await api('GET', `${path}?status=failed`)).body.data).toEqual([]);
    expect((await api('GET', `${path}?status=success&since=${before}`)).body.data).toHaveLength(3);
    expect((await api('GET', `${path}?until=${before}`)).body.data).toEqual([]);

    const bad = await api('GET', `${path}?limit=0&offset=-1&status=done&since=yesterday&until=0000-01-01T00:00:00Z`);
    expect(bad.status).toBe(400);
    expect(bad.body.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'limit',
      'offset',
      'since',
      'status',
      'until',
    ]);

    // An inverted window is named, as on every list with one (function runs, inbound events).
    const inverted = await api('GET', `${path}?since=2026-11-02T00:00:00Z&until=2026-11-01T00:00:00Z`);
    expect(inverted.status).toBe(400);
    expect(inverted.body.details).toEqual([{ field: 'since', message: 'must not be after until' }]);

    const recent = await api('GET', '/webhook-subscriptions/deliveries/recent?limit=100');
    expect(recent.body.data.length).toBeGreaterThanOrEqual(3);
    // Another workspace sees nothing of it.
    expect((await otherApi('GET', path)).status).toBe(404);
    expect((await otherApi('GET', '/webhook-subscriptions/deliveries/recent')).body.data).toEqual([]);
    const id = page.body.data[0].id;
    expect((await otherApi('GET', `/webhook-subscriptions/${sub.id}/deliveries/${id}`)).status).toBe(404);
    expect((await otherApi('POST', `/webhook-subscriptions/deliveries/${id}/retry`)).status).toBe(404);
  });
});
