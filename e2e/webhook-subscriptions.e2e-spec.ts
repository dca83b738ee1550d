import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { ManualClock } from '@strata/testing';
import { adminWorkspaceToken, call, serviceAccountToken, startStack, type Stack } from '@strata/testkit';

let stack: Stack;
/** The webhooks service's clock: the rotation grace is counted on it. */
const clock = new ManualClock();
const suffix = Date.now().toString(36);
const ws = `hooks-${suffix}`;
const otherWs = `hooks-other-${suffix}`;
let token: string;
let otherToken: string;

beforeAll(async () => {
  stack = await startStack({}, { clocks: { webhooks: clock } });
  token = await adminWorkspaceToken(stack, ws);
  otherToken = await adminWorkspaceToken(stack, otherWs);
});

afterAll(async () => {
  await stack?.stop();
});

const base = (workspace = ws) => `${stack.baseUrl}/data/workspace/${workspace}/api/v1/webhook-subscriptions`;
// Letters and digits only: base64 and base64url read it alike (the spec says one, the vectors the other).
const SECRET = /^whsec_[A-Za-z0-9]{44}$/;
const valid = {
  name: 'orders',
  url: 'https://hooks.example.test/strata',
  events: ['record_created', 'record_updated'],
};

describe('webhook subscriptions', () => {
  it('creates a subscription answering its secret once, and lists it without the secret', async () => {
    const created = await call('POST', base(), { token, body: { ...valid, recordSlugs: ['orders'] } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.any(String),
      ...valid,
      recordSlugs: ['orders'],
      active: true,
      previousSecretValidUntil: null,
      secret: expect.stringMatching(SECRET),
    });
    const listed = await call('GET', base(), { token });
    expect(listed.status).toBe(200);
    const row = listed.body.data.find((s: { id: string }) => s.id === created.body.id);
    expect(row).toMatchObject({ name: 'orders', recordSlugs: ['orders'] });
    expect(row).not.toHaveProperty('secret');
    expect(JSON.stringify(listed.body)).not.toContain(created.body.secret.slice(6));
    // Another workspace sees none of it.
    expect((await call('GET', base(otherWs), { token: otherToken })).body.data).toEqual([]);
    expect(
      (await call('PATCH', `${base(otherWs)}/${created.body.id}`, { token: otherToken, body: { active: false } }))
        .status,
    ).toBe(404);
  });

  it('stores the secret encrypted, never in the clear', async () => {
    const created = await call('POST', base(), { token, body: valid });
    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ secret: string }>(
        'SELECT secret FROM webhooks.subscriptions WHERE id = $1',
        [created.body.id],
      );
      expect(rows[0]!.secret).not.toContain(created.body.secret.slice(6));
      expect(rows[0]!.secret.length).toBeGreaterThan(created.body.secret.length);
    } finally {
      await client.end();
    }
  });

  it('refuses bad input with one detail per field, naming the valid events', async () => {
    const res = await call('POST', base(), {
      token,
      body: {
        name: '',
        url: 'ftp://example.test/x',
        events: ['record_created', 'record_exploded'],
        recordSlugs: ['Bad Slug'],
        secret: 'whsec_x',
      },
    });
    expect(res.status).toBe(400);
    const fields = res.body.details.map((d: { field: string }) => d.field).sort();
    expect(fields).toEqual(['events', 'name', 'recordSlugs', 'secret', 'url']);
    const events = res.body.details.find((d: { field: string }) => d.field === 'events');
    expect(events.message).toContain('record_created, record_updated, record_deleted, records_bulk_created');
    expect((await call('POST', base(), { token, body: { ...valid, events: [] } })).status).toBe(400);
    const twice = await call('POST', base(), { token, body: { ...valid, recordSlugs: ['orders', 'orders'] } });
    expect([twice.status, twice.body.details]).toEqual([
      400,
      [{ field: 'recordSlugs', message: 'recordSlugs must not name a collection twice' }],
    ]);
    // Receivers on private addresses are refused unless the operator allows them.
    for (const url of ['http://localhost:9000/in', 'http://127.0.0.1:9000/in', 'http://169.254.169.254/latest']) {
      const refused = await call('POST', base(), { token, body: { ...valid, url } });
      expect({ url, status: refused.status, field: refused.body.details?.[0]?.field }).toEqual({
        url,
        status: 400,
        field: 'url',
      });
      expect(refused.body.details[0].message).toContain('WEBHOOKS_ALLOW_PRIVATE_RECEIVERS');
    }
  });

  it('refuses receivers that are not global unicast, however the address is written (SSRF guard)', async () => {
    const refusedAs = async (method: 'POST' | 'PATCH', path: string, url: string) => {
      const res = await call(method, path, { token, body: method === 'POST' ? { ...valid, url } : { url } });
      const detail = res.body.details?.find((d: { field: string }) => d.field === 'url');
      return { url, status: res.status, message: detail?.message as string | undefined };
    };
    // Literal addresses the URL parser and validator accept: refused by the egress check, naming the block.
    for (const [url, block] of [
      ['http://[::7f00:1]/', '::/96'],
      ['http://[::127.0.0.1]:8080/in', '::/96'],
      ['http://[::ffff:127.0.0.1]/', '127.0.0.0/8'],
      ['http://[64:ff9b::7f00:1]/', '127.0.0.0/8'],
      ['http://[64:ff9b::a9fe:a9fe]/latest', '169.254.0.0/16'],
      ['http://[64:ff9b:1::808:808]/', '64:ff9b:1::/48'],
      ['http://[2002:7f00:1::]/', '2002::/16'],
      ['http://[2002:a00:1::1]/', '2002::/16'],
      ['http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', '2001::/32'],
      ['http://[2001:db8::1]/', '2001:db8::/32'],
      ['https://[3fff::1]/', '3fff::/20'],
      ['http://[2001:2::1]/', '2001:2::/48'],
      ['http://192.0.2.10/', '192.0.2.0/24'],
      ['http://198.51.100.10/', '198.51.100.0/24'],
      ['https://203.0.113.10:8443/in', '203.0.113.0/24'],
      ['http://100.64.0.1/', '100.64.0.0/10'],
      ['http://[fe80::1]/', 'fe80::/10'],
      ['http://[fd00::1]/', 'fc00::/7'],
      ['http://[::]/', '::/128'],
    ] as const) {
      const refused = await refusedAs('POST', base(), url);
      expect(refused).toEqual({ url, status: 400, message: expect.stringContaining(`is in ${block}`) });
      expect(refused.message).toContain('WEBHOOKS_ALLOW_PRIVATE_RECEIVERS');
    }
    // IPv4 in the other notations WHATWG URL normalises to 127.0.0.1: refused too (the URL validator is first).
    for (const url of [
      'http://0x7f.1/',
      'http://2130706433/',
      'http://017700000001/',
      'http://127.1/',
      'http://0/',
      'http://localhost./',
    ])
      expect(await refusedAs('POST', base(), url)).toEqual({ url, status: 400, message: expect.any(String) });
    // PATCH gets the same check, and the subscription keeps its receiver.
    const created = await call('POST', base(), { token, body: valid });
    const patched = await refusedAs('PATCH', `${base()}/${created.body.id}`, 'http://[64:ff9b::7f00:1]/');
    expect(patched).toEqual({
      url: 'http://[64:ff9b::7f00:1]/',
      status: 400,
      message: expect.stringContaining('NAT64'),
    });
    const listed = await call('GET', base(), { token });
    expect(listed.body.data.find((s: { id: string }) => s.id === created.body.id).url).toBe(valid.url);
    expect(listed.body.data.map((s: { url: string }) => s.url)).not.toContain('http://[::7f00:1]/');
    // Global unicast addresses, IPv4 reached through NAT64 included, are receivers like any other.
    for (const url of ['https://[2001:4860:4860::8888]/in', 'https://[64:ff9b::808:808]/in', 'https://8.8.8.8/in'])
      expect({ url, status: (await call('POST', base(), { token, body: { ...valid, url } })).status }).toEqual({
        url,
        status: 201,
      });
  });

  it('updates url, active, name and events; [] clears recordSlugs; the secret cannot be set', async () => {
    const created = await call('POST', base(), { token, body: { ...valid, recordSlugs: ['a', 'b'] } });
    const id = created.body.id as string;
    const patched = await call('PATCH', `${base()}/${id}`, {
      token,
      body: {
        url: 'http://receiver.internal:9000/in',
        active: false,
        name: 'renamed',
        events: ['record_deleted'],
        recordSlugs: [],
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      url: 'http://receiver.internal:9000/in',
      active: false,
      name: 'renamed',
      events: ['record_deleted'],
      recordSlugs: [],
    });
    expect(patched.body).not.toHaveProperty('secret');
    const untouched = await call('PATCH', `${base()}/${id}`, { token, body: { active: true } });
    expect(untouched.body).toMatchObject({ active: true, name: 'renamed', events: ['record_deleted'] });
    const twice = await call('PATCH', `${base()}/${id}`, { token, body: { recordSlugs: ['a', 'a'] } });
    expect(twice.status).toBe(400);
    const setSecret = await call('PATCH', `${base()}/${id}`, { token, body: { secret: 'whsec_abc' } });
    expect(setSecret.status).toBe(400);
    expect(setSecret.body.details[0]).toMatchObject({
      field: 'secret',
      message: expect.stringContaining('rotate-secret'),
    });
  });

  it('rotates the secret: the new one once, the previous one valid for 24 hours', async () => {
    const created = await call('POST', base(), { token, body: valid });
    const rotated = await call('POST', `${base()}/${created.body.id}/rotate-secret`, { token });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(SECRET);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    expect(Date.parse(rotated.body.previousSecretValidUntil)).toBe(clock.now().getTime() + 24 * 3600_000);
  });

  it('replays a create with the same Idempotency-Key, and refuses the key for another request', async () => {
    const headers = { 'idempotency-key': `create-${suffix}` };
    const first = await call('POST', base(), { token, body: valid, headers });
    const again = await call('POST', base(), { token, body: valid, headers });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const other = await call('POST', base(), { token, body: { ...valid, name: 'other' }, headers });
    expect(other.status).toBe(422);
    const count = (await call('GET', base(), { token })).body.data.filter(
      (s: { id: string }) => s.id === first.body.id,
    );
    expect(count).toHaveLength(1);

    // After a rotation the repeat carries no secret (the create's no longer signs); after a delete it is refused.
    const rotated = await call('POST', `${base()}/${first.body.id}/rotate-secret`, { token });
    expect(rotated.status).toBe(200);
    const afterRotation = await call('POST', base(), { token, body: valid, headers });
    expect(afterRotation.status).toBe(201);
    expect(afterRotation.body.id).toBe(first.body.id);
    expect(afterRotation.body).not.toHaveProperty('secret');
    expect((await call('DELETE', `${base()}/${first.body.id}`, { token })).status).toBe(204);
    // Before, the repeat answered 201 with the deleted subscription and its current secret.
    expect(await call('POST', base(), { token, body: valid, headers })).toMatchObject({ status: 409 });
  });

  it('deletes with 204, then answers 404', async () => {
    const created = await call('POST', base(), { token, body: valid });
    expect((await call('DELETE', `${base()}/${created.body.id}`, { token })).status).toBe(204);
    expect((await call('DELETE', `${base()}/${created.body.id}`, { token })).status).toBe(404);
    expect((await call('POST', `${base()}/${created.body.id}/rotate-secret`, { token })).status).toBe(404);
    // A UUID of another version (nil, v7) names nothing here: 404, not a malformed id.
    for (const id of ['00000000-0000-0000-0000-000000000000', '018f6b2c-7d3e-7a1b-8c4d-5e6f7a8b9c0d']) {
      expect({ id, status: (await call('DELETE', `${base()}/${id}`, { token })).status }).toEqual({ id, status: 404 });
    }
    expect((await call('DELETE', `${base()}/not-a-uuid`, { token })).status).toBe(400);
  });

  it('checks permissions per route', async () => {
    const reader = await serviceAccountToken(stack, ws, token, {
      name: `reader-${suffix}`,
      resource: 'webhook-subscriptions',
      actions: ['list'],
    });
    expect((await call('GET', base(), { token: reader })).status).toBe(200);
    expect((await call('POST', base(), { token: reader, body: valid })).status).toBe(403);
  });
});
