import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ManualClock } from '@strata/testing';
import { adminWorkspaceToken, call, EventCollector, startStack, type Stack } from '@strata/testkit';

let stack: Stack;
let events: EventCollector;
/** The data service's clock: records expire when the test moves it past their expiry, not when real time does. */
const clock = new ManualClock();
const ws = `ttl-${Date.now().toString(36)}`;
let token: string;

beforeAll(async () => {
  stack = await startStack({ DATA_TTL_SWEEP_INTERVAL_MS: '100' }, { clocks: { data: clock } });
  token = await adminWorkspaceToken(stack, ws);
  events = await EventCollector.start(stack.natsPrefix);
});

afterAll(async () => {
  await events?.stop();
  await stack?.stop();
});

const api = (method: string, path: string, body?: unknown) =>
  call(method, `${stack.baseUrl}/data/workspace/${ws}/api/v1${path}`, {
    token,
    ...(body !== undefined ? { body } : {}),
  });

describe('time to live', () => {
  it('expires a record after its ttl with a record_expired event, and keeps one whose expiry was cleared', async () => {
    const c = await api('POST', '/structures', { name: 'Sessions', properties: [{ name: 'user', type: 'string' }] });
    expect(c.status).toBe(200);
    const short = await api('POST', '/records', { structureId: c.body.id, data: { user: 'a' }, ttlSeconds: 1 });
    expect(short.status).toBe(201);
    expect(short.body.expiresAt).toBe(new Date(clock.now().getTime() + 1000).toISOString());
    const kept = await api('POST', '/records', { structureId: c.body.id, data: { user: 'b' }, ttlSeconds: 1 });
    expect(kept.status).toBe(201);
    const cleared = await api('PATCH', `/records/${kept.body.id}`, { data: {}, expiresAt: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).not.toHaveProperty('expiresAt');
    // Not expired a millisecond before its expiry.
    clock.advance(999);
    expect((await api('GET', `/records/${short.body.id}`)).status).toBe(200);

    clock.advance(1);
    const [expired] = await events.waitFor(
      (e) => e.payload.event === 'record_expired' && 'recordId' in e.payload && e.payload.recordId === short.body.id,
    );
    expect(expired!.payload).toMatchObject({
      event: 'record_expired',
      deletedBy: 'system:ttl',
      data: { id: short.body.id, data: { user: 'a' } },
    });
    expect((await api('GET', `/records/${short.body.id}`)).status).toBe(404);
    expect((await api('GET', `/records/${kept.body.id}`)).status).toBe(200);
    expect(events.seen.filter((e) => e.payload.event === 'record_expired')).toHaveLength(1);

    const both = await api('POST', '/records', {
      structureId: c.body.id,
      data: {},
      ttlSeconds: 5,
      expiresAt: '2999-01-01T00:00:00Z',
    });
    expect(both.status).toBe(400);
    const past = await api('POST', '/records', {
      structureId: c.body.id,
      data: {},
      expiresAt: new Date(clock.now().getTime()).toISOString(),
    });
    expect(past.body.error.details).toEqual([{ field: 'expiresAt', message: 'must be in the future' }]);
  });
});
