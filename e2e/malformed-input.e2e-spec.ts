import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { adminWorkspaceToken, call, startStack, type Stack } from '@strata/testkit';

/**
 * Issue 13: malformed requests a hostile sweep answered with 500. Each is
 * answered 400 (404, 413 or 415 where that fits) in the error shape of its API
 * area, naming the field or parameter, and changes nothing. Every service is
 * reached through the gateway as clients reach it, the auth routes also directly.
 */
let stack: Stack;
let token: string;
const ws = `bad-${Date.now().toString(36)}`;
let collection: { id: string; recordSlug: string };
let recordId: string;
let groupId: string;
let subscriptionId: string;
let accountId: number;

interface Answer {
  status: number;
  body: any;
}

const data = (path: string) => `${stack.baseUrl}/data/workspace/${ws}/api/v1${path}`;
const iam = (path: string) => `${stack.authUrl}/workspace/${ws}/api/v1${path}`;
const workspaces = (path: string) => `${stack.baseUrl}/workspace/api/v1/workspaces${path}`;

/** A request with a body exactly as given: a string, raw bytes, or nothing. */
async function send(
  method: string,
  url: string,
  options: { body?: string | Buffer; type?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const res = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(options.type ? { 'content-type': options.type } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { body: options.body } : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  return { status: res.status, body };
}

const json = (method: string, url: string, body: string | Buffer) =>
  send(method, url, { body, type: 'application/json' });

/** The records API's shape: `{error: {code, message, details?}}`. */
function expectRecordsError(res: Answer, status: number, field: string, code = 'VALIDATION_ERROR'): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.body.error.message).toEqual(expect.any(String));
  expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
}

/** The general API's shape: `{error, message, details?, code, requestId}`. */
function expectGeneralError(res: Answer, status: number, field: string, code = 'VALIDATION_ERROR'): void {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.body).toMatchObject({
    error: expect.any(String),
    message: expect.any(String),
    requestId: expect.any(String),
  });
  expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
}

/** `{"a":{"a":…}}` nested `depth` levels, as text (JSON.stringify of it would recurse). */
const nested = (depth: number, leaf = '1') => `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;

/** The field named for a body too deep: the object at level 65, under `prefix` at level `at`. */
const tooDeep = (prefix: string, at = 2) => prefix + '.a'.repeat(65 - at);

beforeAll(async () => {
  stack = await startStack();
  token = await adminWorkspaceToken(stack, ws);
  const made = await call('POST', data('/structures'), {
    token,
    body: { name: 'Hostile', schemaDiscoveryMode: 'schemaless', enableVersioning: true },
  });
  expect(made.status).toBe(200);
  collection = made.body;
  const record = await call('POST', data('/records'), { token, body: { structureId: collection.id, data: { n: 1 } } });
  expect(record.status).toBe(201);
  recordId = record.body.id;
  const group = await call('POST', iam('/groups'), { token, body: { name: 'hostile', description: 'kept' } });
  expect(group.status).toBe(201);
  groupId = group.body.id;
  const subscription = await call('POST', data('/webhook-subscriptions'), {
    token,
    body: { name: 'hostile', url: 'https://hooks.example.test/strata', events: ['record_created'] },
  });
  expect(subscription.status).toBe(201);
  subscriptionId = subscription.body.id;
  const account = await call('POST', iam('/service-accounts'), { token, body: { name: 'hostile' } });
  expect(account.status).toBe(201);
  accountId = account.body.id;
});

afterAll(async () => {
  await stack?.stop();
});

async function groupDescription(): Promise<string> {
  return (await call('GET', iam(`/groups/${groupId}`), { token })).body.description;
}

describe('JSON nested deeper than 64 levels', () => {
  const deep = nested(100_000);

  it('is a 400 naming where, in every service, before any transformer runs', async () => {
    const records = await json('POST', data('/records'), `{"structureId":"${collection.id}","data":${deep}}`);
    expectRecordsError(records, 400, tooDeep('data'));
    expect(records.body.error.message).toMatch(/deeper than 64 levels/);
    expectRecordsError(await json('PATCH', data(`/records/${recordId}`), `{"data":${deep}}`), 400, tooDeep('data'));
    const query = await json('POST', data('/records/query'), `{"resource":"x","where":${deep}}`);
    expectRecordsError(query, 400, tooDeep('where'));
    const properties = await json('POST', data('/structures'), `{"name":"x","properties":[${deep}]}`);
    expectRecordsError(properties, 400, tooDeep('properties[0]', 3));
    const webhooks = await json('POST', data(`/webhook-subscriptions/${subscriptionId}/test`), `{"payload":${deep}}`);
    expectGeneralError(webhooks, 400, tooDeep('payload'));
    const group = await json('PATCH', iam(`/groups/${groupId}`), `{"description":${deep}}`);
    expectGeneralError(group, 400, tooDeep('description'));
    expectGeneralError(await json('POST', workspaces(''), `{"slug":${deep}}`), 400, tooDeep('slug'));
    const arrays = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expectGeneralError(await json('POST', iam('/groups'), arrays), 400, '[0]'.repeat(64));
    expect(await groupDescription()).toBe('kept');
  });

  it('leaves documents within the limit alone', async () => {
    const fine = await json(
      'POST',
      data('/records'),
      `{"structureId":"${collection.id}","data":${nested(62, '"deep"')}}`,
    );
    expect(fine.status).toBe(201);
    let value: unknown = fine.body.data;
    for (let i = 0; i < 62; i++) value = (value as { a: unknown }).a;
    expect(value).toBe('deep');
  });
});

describe('a lone UTF-16 surrogate or NUL in a string or key of a body', () => {
  it('is a 400 naming the field', async () => {
    const url = data('/records');
    const body = (inner: string) => `{"structureId":"${collection.id}","data":${inner}}`;
    expectRecordsError(await json('POST', url, body('{"name":"a\\ud800b"}')), 400, 'data.name');
    expectRecordsError(await json('POST', url, body('{"tags":["ok","\\udfff"]}')), 400, 'data.tags[1]');
    expectRecordsError(await json('POST', url, body('{"a\\ud800":1}')), 400, 'data.a\ufffd');
    expectRecordsError(await json('POST', url, body('{"name":"a\\u0000b"}')), 400, 'data.name');
    const description = await json('PATCH', iam(`/groups/${groupId}`), '{"description":"x\\ud83dy"}');
    expectGeneralError(description, 400, 'description');
    expect(description.body.message).toMatch(/surrogate/);
    const name = await json('PATCH', data(`/webhook-subscriptions/${subscriptionId}`), '{"name":"\\u0000"}');
    expectGeneralError(name, 400, 'name');
    expect(await groupDescription()).toBe('kept');
  });

  it('keeps a well-formed pair (an emoji) as it was sent', async () => {
    const res = await json(
      'POST',
      data('/records'),
      `{"structureId":"${collection.id}","data":{"e":"\\ud83d\\ude00"}}`,
    );
    expect(res.status).toBe(201);
    expect(res.body.data.e).toBe('😀');
  });
});

describe('bytes that are not UTF-8 in a body', () => {
  it('are a 400, never stored as U+FFFD', async () => {
    const records = await json(
      'POST',
      data('/records'),
      Buffer.concat([
        Buffer.from(`{"structureId":"${collection.id}","data":{"name":"a`),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('b"}}'),
      ]),
    );
    expectRecordsError(records, 400, 'body');
    expect(records.body.error.message).toMatch(/UTF-8/);
    const auth = await json(
      'PATCH',
      iam(`/groups/${groupId}`),
      Buffer.from([0x7b, 0x22, 0x64, 0x22, 0x3a, 0x22, 0xc3, 0x22, 0x7d]),
    );
    expectGeneralError(auth, 400, 'body');
    // An overlong encoding and an encoded surrogate are not UTF-8 either.
    const overlong = Buffer.concat([Buffer.from('{"description":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]);
    expectGeneralError(await json('PATCH', iam(`/groups/${groupId}`), overlong), 400, 'body');
    const surrogate = Buffer.concat([
      Buffer.from('{"description":"'),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from('"}'),
    ]);
    expectGeneralError(await json('PATCH', iam(`/groups/${groupId}`), surrogate), 400, 'body');
    expect(await groupDescription()).toBe('kept');
  });
});

describe('a body of valid JSON that is not an object or array', () => {
  it('is a 400 saying what it is, in every service, not a parser error about valid JSON', async () => {
    for (const [body, kind] of [
      ['5', 'a number'],
      ['"str"', 'a string'],
      ['null', 'null'],
      ['true', 'a boolean'],
    ] as const) {
      const message = `The body must be a JSON object or array, not ${kind}.`;
      const records = await json('POST', data('/records'), body);
      expectRecordsError(records, 400, 'body');
      expect(records.body.error.details).toEqual([{ field: 'body', message }]);
      expect(await json('POST', data('/compute-functions'), body)).toMatchObject({
        status: 400,
        body: { error: message, statusCode: 400 },
      });
      expectGeneralError(await json('POST', workspaces(''), body), 400, 'body');
    }
    // Malformed JSON is still named as such.
    const malformed = await json('POST', data('/records'), '{"a":');
    expect(malformed.body.error.message).toBe('Request body is not valid JSON');
    // The functions shape, whose `error` is the field's message, says so too, then where.
    const functions = await json('POST', data('/compute-functions/test'), '{bad');
    expect(functions.status).toBe(400);
    expect(functions.body.error).toMatch(/^Request body is not valid JSON: \S/);
  });
});

describe('a body whose Content-Encoding does not decode', () => {
  it('is a 400 naming Content-Encoding in every service, and a body that decodes still works', async () => {
    const compressed = (encoding: string, body: string | Buffer) => ({
      body,
      type: 'application/json',
      headers: { 'content-encoding': encoding },
    });
    const valid = gzipSync(Buffer.from('{"description":"zipped"}'));
    for (const [encoding, body] of [
      ['gzip', 'not gzip'],
      ['gzip', valid.subarray(0, valid.length - 6)], // truncated
      ['deflate', 'not deflate'],
      ['br', 'not brotli'],
    ] as const) {
      const records = await send('POST', data('/records'), compressed(encoding, body));
      expectRecordsError(records, 400, 'Content-Encoding');
      expect(records.body.error.message).toBe('Request body could not be decompressed');
      const functions = await send('POST', data('/compute-functions'), compressed(encoding, body));
      expect({ encoding, status: functions.status, body: functions.body }).toEqual({
        encoding,
        status: 400,
        body: expect.objectContaining({
          error: `The body is not valid ${encoding} (Content-Encoding)`,
          statusCode: 400,
        }),
      });
      expectGeneralError(await send('POST', workspaces(''), compressed(encoding, body)), 400, 'Content-Encoding');
      expectGeneralError(
        await send('PATCH', iam(`/groups/${groupId}`), compressed(encoding, body)),
        400,
        'Content-Encoding',
      );
    }
    expect(await send('PATCH', iam(`/groups/${groupId}`), compressed('gzip', valid))).toMatchObject({ status: 200 });
    expect(await groupDescription()).toBe('zipped');
    await send('PATCH', iam(`/groups/${groupId}`), { body: '{"description":"kept"}', type: 'application/json' });
  });
});

describe('NUL, malformed percent-encoding or a surrogate in a path segment or query parameter', () => {
  it('is a 400 naming the parameter', async () => {
    expectRecordsError(await send('GET', data('/structures/slug/%00')), 400, 'recordSlug');
    expectRecordsError(await send('GET', data('/records/slug/%00')), 400, 'recordSlug');
    expectRecordsError(
      await send('GET', data(`/records/slug/${collection.recordSlug}?filter=name:%00`)),
      400,
      'filter',
    );
    expectRecordsError(await send('GET', data('/structures?search=%00')), 400, 'search');
    expectRecordsError(await send('GET', data('/structures?search=%zz')), 400, 'search');
    expectRecordsError(await send('GET', data('/structures?search=%ff')), 400, 'search');
    expectRecordsError(await send('GET', data('/structures/slug/%zz')), 400, 'path');
    expectRecordsError(await send('GET', data('/structures/slug/%ED%A0%80')), 400, 'path');
    expectRecordsError(await send('GET', data('/saved-queries/%00')), 400, 'resource');
    expectGeneralError(await send('GET', workspaces('/%00')), 400, 'slug');
    expectGeneralError(await send('GET', data('/webhook-subscriptions/deliveries/recent?since=%00')), 400, 'since');
    expectGeneralError(await send('DELETE', iam(`/groups/${groupId}/members/%00/x`)), 400, 'type');
    expectGeneralError(await send('GET', `${stack.baseUrl}/docs/%zz.json`), 400, 'path');
  });

  it('keeps well-formed encodings working', async () => {
    expect((await send('GET', data('/structures?search=caf%C3%A9+au+lait'))).status).toBe(200);
    expect((await send('GET', data('/structures/slug/no-such-slug'))).status).toBe(404);
  });
});

describe('the token endpoint', () => {
  const tokenEndpoint = (form: string, headers: Record<string, string> = {}) =>
    fetch(`${stack.authUrl}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: form,
    }).then(async (res) => ({
      status: res.status,
      body: (await res.json()) as { error: string; error_description?: string },
    }));

  it('answers NUL or malformed encoding in any field with an OAuth client error, never server_error', async () => {
    for (const form of [
      'grant_type=client_credentials&client_id=%00&client_secret=x',
      'grant_type=client_credentials&client_id=ci_x&client_secret=%00',
      'grant_type=client_credentials&client_id=ci_x&client_secret=x&scope=%00',
      'grant_type=%00',
      'grant_type=client_credentials&client_id=%zz&client_secret=x',
    ]) {
      const res = await tokenEndpoint(form);
      expect([form, res.status, res.body.error]).toEqual([form, 400, 'invalid_request']);
    }
    const named = await tokenEndpoint('grant_type=client_credentials&client_id=%00&client_secret=x');
    expect(named.body.error_description).toMatch(/^client_id /);
    const notUtf8 = await fetch(`${stack.authUrl}/oidc/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: Buffer.concat([Buffer.from('grant_type=client_credentials&client_id='), Buffer.from([0xff])]),
    });
    expect(notUtf8.status).toBe(400);
    expect(((await notUtf8.json()) as { error: string }).error).toBe('invalid_request');
    const query = await fetch(`${stack.authUrl}/oidc/auth?client_id=%00`);
    expect(query.status).toBe(400);
    expect(((await query.json()) as { error: string }).error).toBe('invalid_request');
  });

  it('finds no client for an id holding NUL in a Basic header', async () => {
    const basic = Buffer.from('a\u0000b:secret').toString('base64');
    const res = await tokenEndpoint('grant_type=client_credentials', { authorization: `Basic ${basic}` });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(['invalid_client', 'invalid_request']).toContain(res.body.error);
  });
});

describe('integers beyond their column', () => {
  it('are a 400 naming the field, in bodies and queries of every service', async () => {
    expectRecordsError(await json('POST', data(`/records/${recordId}/restore`), '{"version":1e308}'), 400, 'version');
    expectRecordsError(
      await json('POST', data(`/records/${recordId}/restore`), '{"version":2147483648}'),
      400,
      'version',
    );
    expectRecordsError(await send('GET', data(`/records/${recordId}?version=99999999999`)), 400, 'version');
    expectRecordsError(await send('GET', data(`/records/slug/${collection.recordSlug}?limit=1e20`)), 400, 'limit');
    expectRecordsError(
      await send('GET', data(`/records/slug/${collection.recordSlug}?offset=99999999999`)),
      400,
      'offset',
    );
    expectRecordsError(await send('GET', data(`/records/${recordId}/changelog?limit=1e20`)), 400, 'limit');
    expectRecordsError(
      await json('POST', data('/records/query'), '{"resource":"x","page":{"offset":1e20}}'),
      400,
      'page.offset',
    );
    expectGeneralError(await send('GET', iam('/service-accounts?page=1e20')), 400, 'page');
    expectGeneralError(await send('GET', iam('/service-accounts?page=2147483648')), 400, 'page');
    expectGeneralError(await send('GET', iam('/service-accounts/99999999999')), 400, 'id', 'INVALID_ID');
    expectGeneralError(await send('GET', data('/webhook-subscriptions/deliveries/recent?offset=1e20')), 400, 'offset');
  });

  it('and dates PostgreSQL cannot read are a 400 too', async () => {
    for (const date of ['0000-01-01T00:00:00Z', '2026-02-30', '2026-W01', '%2B275760-09-14T00:00:00Z']) {
      expectRecordsError(await send('GET', data(`/records/${recordId}/changelog?startDate=${date}`)), 400, 'startDate');
      expectGeneralError(
        await send('GET', data(`/webhook-subscriptions/deliveries/recent?until=${date}`)),
        400,
        'until',
      );
    }
    const expires = await json(
      'PATCH',
      data(`/records/${recordId}`),
      '{"data":{},"expiresAt":"+275760-09-14T00:00:00Z"}',
    );
    expectRecordsError(expires, 400, 'expiresAt');
  });
});

describe('null for a field that cannot be null', () => {
  it('is a 400 naming the field on every PATCH and PUT, and changes nothing', async () => {
    expectGeneralError(await json('PATCH', iam(`/groups/${groupId}`), '{"description":null}'), 400, 'description');
    expect(await groupDescription()).toBe('kept');
    const account = (path: string) => iam(`/service-accounts/${accountId}${path}`);
    expectGeneralError(await json('PUT', account('/description'), '{"description":null}'), 400, 'description');
    expectGeneralError(await json('PUT', account('/name'), '{"name":null}'), 400, 'name');
    for (const field of [
      'description',
      'name',
      'properties',
      'tags',
      'status',
      'enableVersioning',
      'retentionPolicy',
    ]) {
      const res = await json('PUT', data(`/structures/${collection.id}`), JSON.stringify({ [field]: null }));
      expectRecordsError(res, 400, field);
    }
    const discovery = data(`/structures/${collection.recordSlug}/schema-discovery`);
    expectRecordsError(await json('PUT', discovery, '{"schemaDiscoveryConfig":null}'), 400, 'schemaDiscoveryConfig');
    for (const field of ['metadata', 'ttlSeconds', 'options']) {
      const res = await json('PATCH', data(`/records/${recordId}`), JSON.stringify({ data: {}, [field]: null }));
      expectRecordsError(res, 400, field);
    }
    expectRecordsError(await json('PUT', data(`/records/${recordId}`), '{"data":{},"metadata":null}'), 400, 'metadata');
    expectRecordsError(
      await json(
        'PATCH',
        data('/records/bulk'),
        JSON.stringify({ updates: [{ id: recordId, data: {} }], options: null }),
      ),
      400,
      'options',
    );
    for (const field of ['name', 'url', 'events', 'recordSlugs', 'active']) {
      const res = await json(
        'PATCH',
        data(`/webhook-subscriptions/${subscriptionId}`),
        JSON.stringify({ [field]: null }),
      );
      expectGeneralError(res, 400, field);
    }
    const unchanged = await call('GET', data(`/structures/${collection.id}`), { token });
    expect(unchanged.body).toMatchObject({ name: 'Hostile', enableVersioning: true });
  });

  it('clears a record expiry where the API reference says null clears it', async () => {
    const set = await json('PATCH', data(`/records/${recordId}`), '{"data":{},"ttlSeconds":3600}');
    expect(set.status).toBe(200);
    expect(set.body.expiresAt).toEqual(expect.any(String));
    const cleared = await json('PATCH', data(`/records/${recordId}`), '{"data":{},"expiresAt":null}');
    expect(cleared.status).toBe(200);
    expect(cleared.body.expiresAt).toBeUndefined();
  });
});

describe('a JSON route called with another content type', () => {
  it('is a 415 in every service and changes nothing', async () => {
    const plain = (method: string, url: string, body: string) => send(method, url, { body, type: 'text/plain' });
    expectGeneralError(
      await plain('PATCH', iam(`/groups/${groupId}`), '{"description":"changed"}'),
      415,
      'Content-Type',
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expect(await groupDescription()).toBe('kept');
    const form = await send('PATCH', iam(`/groups/${groupId}`), {
      body: 'description=changed',
      type: 'application/x-www-form-urlencoded',
    });
    expectGeneralError(form, 415, 'Content-Type', 'UNSUPPORTED_MEDIA_TYPE');
    expect(await groupDescription()).toBe('kept');
    expectRecordsError(
      await plain('PATCH', data(`/records/${recordId}`), '{"data":{"n":2}}'),
      415,
      'Content-Type',
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectRecordsError(
      await plain('POST', data('/structures'), '{"name":"x"}'),
      415,
      'Content-Type',
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectGeneralError(
      await plain('PATCH', data(`/webhook-subscriptions/${subscriptionId}`), '{"active":false}'),
      415,
      'Content-Type',
      'UNSUPPORTED_MEDIA_TYPE',
    );
    const utf16 = await send('PATCH', iam(`/groups/${groupId}`), {
      body: Buffer.from('{"description":"x"}', 'utf16le'),
      type: 'application/json; charset=utf-16le',
    });
    expectGeneralError(utf16, 415, 'Content-Type', 'UNSUPPORTED_MEDIA_TYPE');
    expect((await call('GET', data(`/records/${recordId}`), { token })).body.data.n).toBe(1);
  });

  it('leaves routes that take no body working without one, and form routes with their form', async () => {
    // No body and no content type (fetch sends Content-Length: 0 on a bodiless POST).
    expect((await send('POST', data(`/webhook-subscriptions/${subscriptionId}/rotate-secret`))).status).toBe(200);
    expect((await send('POST', iam(`/service-accounts/${accountId}/rotate`))).status).toBe(200);
    expect((await send('POST', data(`/structures/${collection.recordSlug}/schema-discovery/scan`))).status).toBe(200);
    // The interactive login posts its HTML form (adminWorkspaceToken logs in through it).
    expect(await adminWorkspaceToken(stack, `${ws}-2`)).toEqual(expect.any(String));
    const issued = await fetch(`${stack.authUrl}/oidc/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'ci_nobody', client_secret: 'x' }),
    });
    expect(issued.status).toBe(401);
  });
});

describe('a body sent to a route that takes none', () => {
  it('is a 400 naming each field in the area’s shape, and changes nothing; {} and no body pass', async () => {
    const before = (await call('GET', data(`/webhook-subscriptions`), { token })).body.data[0].secret;
    const rotated = await json('POST', data(`/webhook-subscriptions/${subscriptionId}/rotate-secret`), '{"bogus":1}');
    expectGeneralError(rotated, 400, 'bogus');
    expect(rotated.body.details).toEqual([
      { field: 'bogus', message: 'property bogus should not exist (this endpoint takes no body)' },
    ]);
    expect((await call('GET', data(`/webhook-subscriptions`), { token })).body.data[0].secret).toBe(before);
    expectGeneralError(
      await json('POST', data(`/webhook-subscriptions/${subscriptionId}/rotate-secret`), '[1]'),
      400,
      'body',
    );
    expect((await json('POST', data(`/webhook-subscriptions/${subscriptionId}/rotate-secret`), '{}')).status).toBe(200);

    // The functions area answers in its own shape; a pause with a body pauses nothing.
    const fn = await call('POST', data('/compute-functions'), {
      token,
      body: { name: 'quiet', code: 'async function run() { return { success: true }; }' },
    });
    const trigger = await call('POST', data('/function-triggers'), {
      token,
      body: { name: 'by-hand', functionId: fn.body.id, executionType: 'on-demand' },
    });
    const paused = await json('PATCH', data(`/function-triggers/${trigger.body.id}/pause`), '{"now":true,"why":"x"}');
    expect({ status: paused.status, fields: paused.body.details?.map((d: { field: string }) => d.field) }).toEqual({
      status: 400,
      fields: ['now', 'why'],
    });
    expect(paused.body.statusCode).toBe(400);
    expect((await call('GET', data(`/function-triggers/${trigger.body.id}`), { token })).body.paused).toBe(false);
    expect((await send('PATCH', data(`/function-triggers/${trigger.body.id}/pause`))).status).toBe(200);

    // Without access the caller hears 401 first, as for any body.
    const anonymous = await fetch(data(`/function-triggers/${trigger.body.id}/resume`), {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: '{"bogus":1}',
    });
    expect(anonymous.status).toBe(401);
  });
});
