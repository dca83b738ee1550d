import { createHmac } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { computeEndpointQueue, computeEndpointSubject } from '@strata/contracts';
import { eventually } from '@strata/testing';
import {
  adminWorkspaceToken,
  call,
  serviceAccountToken,
  startStack,
  type Stack,
  type WorkerProcess,
} from '@strata/testkit';

/**
 * The worker the gateway sends endpoint calls to: two endpoint isolates and one background one,
 * all three the suite's one workspace's to hold (by default a workspace holds all of a worker's
 * isolates but one: the routing tests count on the three).
 */
const GATEWAY_WORKER = {
  COMPUTE_WORKER_ISOLATES: '1',
  COMPUTE_WORKER_ENDPOINT_ISOLATES: '2',
  COMPUTE_WORKSPACE_ISOLATES: '3',
  // A call beyond them waits for one (long enough that only the queue's limits would refuse it).
  COMPUTE_ENDPOINT_QUEUE_WAIT_MS: '30000',
};
let stack: Stack;
/** The worker behind the gateway (started once the tests of no worker at all are done). */
let gatewayWorker: WorkerProcess;
const suffix = Date.now().toString(36);
const ws = `endp-${suffix}`;
const otherWs = `endp-other-${suffix}`;
let token: string;
let otherToken: string;
const functions: Record<string, string> = {};

const base = (workspace = ws) => `${stack.baseUrl}/data/workspace/${workspace}/api/v1`;
/** Through the gateway: served by the sandbox worker behind it, on its own isolates. */
const endpoint = (path: string, query = '') => `${base()}/endpoints/${path}${query}`;
/** The compute API's own route, which hands every run to a worker over NATS. */
const apiEndpoint = (path: string) => `${stack.computeUrl}/data/workspace/${ws}/api/v1/endpoints/${path}`;

const CODE = {
  echo: `export default async (context) => ({ req: context.req, triggerParams });`,
  reply: `export default async (context) => {
    context.res.json({
      statusCode: 201,
      headers: { 'x-made-by': 'strata', 'transfer-encoding': 'chunked', 'bad header': 'x' },
      body: { created: context.req.payload },
    });
  };`,
  text: `export default async (context) => {
    context.res.json({ statusCode: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'pong ' + context.req.query.n });
  };`,
  page: `export default async (context) => {
    context.res.json({
      statusCode: 200,
      headers: { 'content-type': 'text/html; charset=utf-8', 'set-cookie': context.req.query.c },
      body: '<!doctype html><script>fetch("/docs").then(() => document.title = document.cookie)</script>',
    });
  };`,
  redirect: `export default async (context) => {
    context.res.json({
      statusCode: 302,
      headers: { location: context.req.query.to, 'clear-site-data': '"cookies"', 'content-security-policy': "img-src 'none'" },
      body: null,
    });
  };`,
  throws: `export default async () => { throw new Error('the secret reason'); };`,
  nap: `export default async () => { await new Promise((resolve) => setTimeout(resolve, 2000)); return 'rested'; };`,
  slow: `export default async () => { await new Promise((resolve) => setTimeout(resolve, 5000)); return 'late'; };`,
  background: `async function run() { await new Promise((resolve) => setTimeout(resolve, 1500)); return { success: true }; }`,
};

beforeAll(async () => {
  // A short grace and sweep, so that a call no worker answers is settled within the test's time.
  stack = await startStack({ COMPUTE_ENDPOINT_GRACE_MS: '2000', COMPUTE_SWEEP_INTERVAL_MS: '500' });
  token = await adminWorkspaceToken(stack, ws);
  otherToken = await adminWorkspaceToken(stack, otherWs);
  for (const [name, code] of Object.entries(CODE)) {
    const fn = await call('POST', `${base()}/compute-functions`, { token, body: { name, code } });
    expect(fn.status).toBe(201);
    functions[name] = fn.body.id;
  }
});

afterAll(async () => {
  await stack?.stop();
});

async function createEndpoint(name: string, fn: string, metadata: Record<string, unknown>) {
  const created = await call('POST', `${base()}/function-triggers`, {
    token,
    body: { name, functionId: functions[fn], executionType: 'endpoint', triggerMetadata: { path: name, ...metadata } },
  });
  expect(created.status).toBe(201);
  return created.body;
}

/** An endpoint run once its outcome is written (just after the call was answered). */
const finalRun = (runId: string | null) =>
  eventually(async () => {
    const r = await call('GET', `${base()}/function-runs/${runId}`, { token });
    expect(r.status).toBe(200);
    return r.body.status === 'running' ? undefined : r.body;
  }, 20_000);

const runsOf = async (triggerId: string) =>
  (await call('GET', `${base()}/function-runs?triggerId=${triggerId}`, { token })).body.runs as any[];

/** An hmac-mode call's headers, signed as docs/compute.md says (by hand: not the SDK's code). */
const sign = (secret: string, method: string, target: string, body: string, at = Math.floor(Date.now() / 1000)) => ({
  'x-signature-timestamp': String(at),
  'x-signature': `sha256=${createHmac('sha256', secret)
    .update(`${at}.${method}.${Buffer.byteLength(target)}:${target}.${body}`)
    .digest('hex')}`,
});

describe('endpoint triggers', () => {
  it('records a call that no worker answered, and fails its run as WorkerLost once the hold ends', async () => {
    const trigger = await createEndpoint('unanswered', 'echo', { auth: { mode: 'public' }, timeoutMs: 1000 });
    // A member of the workers' queue group that takes every dispatch and never answers (a worker that died at once).
    const nc = await connect({ servers: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222' });
    const dispatches: any[] = [];
    try {
      nc.subscribe(computeEndpointSubject(stack.natsPrefix), {
        queue: computeEndpointQueue(stack.natsPrefix),
        callback: (_err, msg) => {
          dispatches.push(msg.json());
        },
      });
      await nc.flush();
      const answered = await call('POST', apiEndpoint('unanswered'), { body: { a: 1 } });
      expect(answered.status).toBe(504);
      const runId = answered.headers.get('x-strata-run-id');
      expect(dispatches).toEqual([
        expect.objectContaining({ runId, run: expect.objectContaining({ functionId: functions['echo'] }) }),
      ]);
      // The worker would have recorded the run it carried; with none, the API did, and the sweep ends it.
      const run = await finalRun(runId);
      expect(run).toMatchObject({ status: 'failed', triggerId: trigger.id, error: { name: 'WorkerLost' } });
    } finally {
      await nc.close();
    }
  });

  it('answers 503 and records nothing while no worker is running (the call is not queued)', async () => {
    const trigger = await createEndpoint('no-worker', 'echo', { auth: { mode: 'public' } });
    // Through the gateway (no worker behind it) and through the compute API (no worker takes its dispatch) alike.
    for (const url of [endpoint('no-worker'), apiEndpoint('no-worker')]) {
      const answered = await call('POST', url, { body: { a: 1 } });
      expect(answered.status).toBe(503);
      expect(answered.headers.get('retry-after')).toBe('1');
      expect(answered.body).toEqual({ error: expect.stringContaining('not queued'), statusCode: 503 });
    }
    expect(await runsOf(trigger.id)).toEqual([]);
    // From now on a worker serves the calls: those it takes itself, and those the API hands it over NATS.
    gatewayWorker = await stack.startWorker(GATEWAY_WORKER);
    expect(gatewayWorker.url).toBe(stack.workerUrl);
    for (const url of [endpoint('no-worker'), apiEndpoint('no-worker')]) {
      const answered = await call('POST', url, { body: { a: 1 } });
      expect(answered.status).toBe(200);
      expect(answered.body).toMatchObject({ req: { payload: { a: 1 } } });
    }
    expect(await runsOf(trigger.id)).toHaveLength(2);
    expect((await call('GET', `${gatewayWorker.url}/readyz`)).status).toBe(200);
  });

  it('refuses a run() function for an endpoint trigger and endpoint code for other triggers', async () => {
    const wrongForEndpoint = await call('POST', `${base()}/function-triggers`, {
      token,
      body: {
        name: 'x1',
        functionId: functions['background'],
        executionType: 'endpoint',
        triggerMetadata: { path: 'x1' },
      },
    });
    expect(wrongForEndpoint.status).toBe(400);
    expect(wrongForEndpoint.body.details).toEqual([
      { field: 'functionId', message: expect.stringContaining('export default async (context)') },
    ]);
    const wrongForOnDemand = await call('POST', `${base()}/function-triggers`, {
      token,
      body: { name: 'x2', functionId: functions['echo'], executionType: 'on-demand' },
    });
    expect(wrongForOnDemand.status).toBe(400);
    expect(wrongForOnDemand.body.details[0].field).toBe('functionId');
  });

  it('bearer (the default): the function gets the request without the credential; 401 without a token, 403 without permission', async () => {
    const trigger = await createEndpoint('orders', 'echo', {
      allowedMethods: ['POST', 'GET'],
      params: { region: 'eu' },
    });
    expect(trigger.triggerMetadata.auth).toEqual({ mode: 'bearer' });
    expect(trigger.issuedCredentials).toBeUndefined();

    const answered = await call('POST', endpoint('orders', '?n=1&tag=a&tag=b'), {
      token,
      body: { item: 'book' },
      headers: { 'x-custom': 'yes', cookie: 'session=browser-secret', 'proxy-authorization': 'Basic cHJveHk6cHc=' },
    });
    expect(answered.status).toBe(200);
    expect(answered.body.triggerParams).toEqual({ region: 'eu' });
    expect(answered.body.req).toMatchObject({
      method: 'POST',
      path: '/endpoints/orders',
      query: { n: '1', tag: ['a', 'b'] },
      payload: { item: 'book' },
      auth: { mode: 'bearer', principalType: 'user', principalId: expect.any(String) },
    });
    expect(answered.body.req.headers['x-custom']).toBe('yes');
    // No credential of the caller reaches user code: its token, a browser's cookies, a proxy's credential.
    for (const credential of ['authorization', 'cookie', 'proxy-authorization']) {
      expect(answered.body.req.headers[credential]).toBeUndefined();
    }
    const runId = answered.headers.get('x-strata-run-id');
    expect(runId).toEqual(expect.any(String));

    const run = await finalRun(runId);
    expect(run).toMatchObject({ status: 'succeeded', triggerId: trigger.id });
    expect(JSON.stringify(run.result)).toContain('book');

    const bare = await call('POST', endpoint('orders'), { body: {} });
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toBe('Bearer');
    expect(bare.body).toEqual({ error: expect.any(String), statusCode: 401 });
    expect((await call('POST', endpoint('orders'), { token: 'not-a-jwt', body: {} })).status).toBe(401);
    expect((await call('POST', endpoint('orders'), { token: otherToken, body: {} })).status).toBe(403);

    const reader = await serviceAccountToken(stack, ws, token, {
      name: 'reader',
      resource: 'function-triggers',
      actions: ['retrieve'],
    });
    const refused = await call('POST', endpoint('orders'), { token: reader, body: {} });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toContain('function-triggers:execute');
    const executor = await serviceAccountToken(stack, ws, token, {
      name: 'executor',
      resource: 'function-triggers',
      actions: ['execute'],
    });
    const allowed = await call('GET', endpoint('orders', '?q=1'), { token: executor });
    expect(allowed.status).toBe(200);
    expect(allowed.body.req).toMatchObject({
      method: 'GET',
      payload: null,
      auth: { principalType: 'service_account' },
    });
  });

  it('404 for an unknown path and a paused endpoint, 405 naming the allowed methods', async () => {
    const trigger = await createEndpoint('pausable', 'echo', { auth: { mode: 'public' } });
    expect((await call('POST', endpoint('nothing-here'), { body: {} })).status).toBe(404);
    expect((await call('POST', `${base('no-such-workspace')}/endpoints/pausable`, { body: {} })).status).toBe(404);
    const wrongMethod = await call('PUT', endpoint('pausable'), { body: {} });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    expect(wrongMethod.body.error).toContain('POST');

    expect((await call('PATCH', `${base()}/function-triggers/${trigger.id}/pause`, { token })).status).toBe(200);
    const paused = await call('POST', endpoint('pausable'), { body: {} });
    expect(paused.status).toBe(404);
    expect(paused.body).toEqual({ error: 'No endpoint at /endpoints/pausable.', statusCode: 404 });
    expect((await call('PATCH', `${base()}/function-triggers/${trigger.id}/resume`, { token })).status).toBe(200);
    expect((await call('POST', endpoint('pausable'), { body: {} })).status).toBe(200);
  });

  it('runs a function’s new code from the first call after its update, and stops at once when it is deleted', async () => {
    const versioned = (n: number) => `export default async () => ({ version: ${n} });`;
    const fn = await call('POST', `${base()}/compute-functions`, {
      token,
      body: { name: 'versioned', code: versioned(1) },
    });
    expect(fn.status).toBe(201);
    functions['versioned'] = fn.body.id;
    await createEndpoint('versioned', 'versioned', { auth: { mode: 'public' } });
    expect((await call('POST', endpoint('versioned'), { body: {} })).body).toEqual({ version: 1 });
    const updated = await call('PUT', `${base()}/compute-functions/${fn.body.id}`, {
      token,
      body: { code: versioned(2) },
    });
    expect(updated.status).toBe(200);
    expect((await call('POST', endpoint('versioned'), { body: {} })).body).toEqual({ version: 2 });
    expect((await call('DELETE', `${base()}/compute-functions/${fn.body.id}`, { token })).status).toBe(200);
    expect((await call('POST', endpoint('versioned'), { body: {} })).status).toBe(404);
  });

  it('sends what context.res.json set, leaving out headers a function cannot set', async () => {
    await createEndpoint('replying', 'reply', { auth: { mode: 'public' } });
    const answered = await call('POST', endpoint('replying'), { body: { n: 7 } });
    expect(answered.status).toBe(201);
    expect(answered.headers.get('x-made-by')).toBe('strata');
    expect(answered.headers.get('transfer-encoding')).toBeNull();
    expect(answered.body).toEqual({ created: { n: 7 } });

    await createEndpoint('texty', 'text', { auth: { mode: 'public' }, allowedMethods: ['GET'] });
    const text = await call('GET', endpoint('texty', '?n=3'));
    expect(text.status).toBe(200);
    expect(text.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(text.body).toBe('pong 3');
  });

  it('serves an answer as untrusted content: a sandbox, nosniff, and no cookie unless the trigger allows them', async () => {
    await createEndpoint('html-page', 'page', { auth: { mode: 'public' }, allowedMethods: ['GET'] });
    const page = (path: string, cookie: string) => call('GET', endpoint(path, `?c=${encodeURIComponent(cookie)}`));
    const html = await page('html-page', 'a=b; Domain=example.com');
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    // Its script runs in an origin of its own: not the API's, where /docs and every workspace's API are.
    expect(html.headers.get('content-security-policy')).toBe('sandbox');
    expect(html.headers.get('x-content-type-options')).toBe('nosniff');
    expect(html.headers.getSetCookie()).toEqual([]);
    expect(html.body).toContain('<script>');

    // Opted in: host-only cookies, kept to this workspace's endpoints.
    const trigger = await createEndpoint('cookie-page', 'page', {
      auth: { mode: 'public' },
      allowedMethods: ['GET'],
      allowCookies: true,
    });
    expect(trigger.triggerMetadata.allowCookies).toBe(true);
    expect((await page('cookie-page', 'a=b; HttpOnly; SameSite=Lax')).headers.getSetCookie()).toEqual([
      'a=b; HttpOnly; SameSite=Lax',
    ]);
    expect((await page('cookie-page', 'a=b; Domain=example.com; Secure')).headers.getSetCookie()).toEqual([
      'a=b; Secure',
    ]);
    const widened = await page('cookie-page', 's=1; Path=/; HttpOnly');
    expect(widened.headers.getSetCookie()).toEqual([`s=1; Path=/data/workspace/${ws}/api/v1/endpoints; HttpOnly`]);
    expect(widened.headers.get('content-security-policy')).toBe('sandbox');

    const refusedFlag = await call('POST', `${base()}/function-triggers`, {
      token,
      body: {
        name: 'bad-cookies',
        functionId: functions['page'],
        executionType: 'endpoint',
        triggerMetadata: { path: 'bad-cookies', allowCookies: 'yes' },
      },
    });
    expect(refusedFlag.status).toBe(400);
    expect(refusedFlag.body.details).toEqual([{ field: 'triggerMetadata.allowCookies', message: 'must be a boolean' }]);

    // Errors on an endpoint path are endpoint answers too.
    const missing = await call('GET', endpoint('no-such-page'));
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-security-policy')).toBe('sandbox');
    expect(missing.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('redirects to http(s) only, never clears the site data, and keeps the sandbox beside its own policy', async () => {
    await createEndpoint('redirect', 'redirect', { auth: { mode: 'public' }, allowedMethods: ['GET'] });
    const to = async (location: string) => {
      const res = await fetch(endpoint('redirect', `?to=${encodeURIComponent(location)}`), { redirect: 'manual' });
      await res.arrayBuffer();
      return res;
    };
    const away = await to('https://app.example.com/signed-in');
    expect(away.status).toBe(302);
    expect(away.headers.get('location')).toBe('https://app.example.com/signed-in');
    expect(away.headers.get('clear-site-data')).toBeNull();
    expect(away.headers.get('content-security-policy')).toBe("sandbox, img-src 'none'");
    for (const location of ['javascript:alert(document.domain)', 'data:text/html,<script>alert(1)</script>']) {
      const refused = await to(location);
      expect(refused.status).toBe(302);
      expect(refused.headers.get('location')).toBeNull();
    }
  });

  it('apiKey: generated on creation, shown once, stored hashed, replaced on rotation', async () => {
    const trigger = await createEndpoint('keyed', 'echo', { auth: { mode: 'apiKey' } });
    const key: string = trigger.issuedCredentials.apiKey;
    expect(key).toMatch(/^sek_[A-Za-z0-9_-]{43}$/);
    expect(trigger.credentials).toMatchObject({ apiKey: { last4: key.slice(-4) }, signingSecret: null });

    const got = await call('GET', `${base()}/function-triggers/${trigger.id}`, { token });
    expect(JSON.stringify(got.body)).not.toContain(key);
    expect(got.body.credentials.apiKey.last4).toBe(key.slice(-4));
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query(
        'SELECT row_to_json(c)::text AS row FROM compute.endpoint_credentials c WHERE trigger_id = $1',
        [trigger.id],
      );
      expect(rows[0].row).not.toContain(key);
    } finally {
      await db.end();
    }

    const ok = await call('POST', endpoint('keyed'), { body: {}, headers: { 'x-api-key': key } });
    expect(ok.status).toBe(200);
    expect(ok.body.req.auth).toEqual({ mode: 'apiKey' });
    expect(ok.body.req.headers['x-api-key']).toBeUndefined();
    expect((await call('POST', endpoint('keyed'), { body: {}, headers: { 'x-api-key': `${key}x` } })).status).toBe(401);
    const none = await call('POST', endpoint('keyed'), { body: {} });
    expect(none.status).toBe(401);
    expect(none.body.error).toContain('x-api-key');
    expect(none.headers.get('www-authenticate')).toBeNull();
    // A bearer token is not a way in when the endpoint does not list bearer.
    expect((await call('POST', endpoint('keyed'), { token, body: {} })).status).toBe(401);

    const rotated = await call('POST', `${base()}/function-triggers/${trigger.id}/rotate-credentials`, {
      token,
      body: {},
    });
    expect(rotated.status).toBe(200);
    const newKey: string = rotated.body.issuedCredentials.apiKey;
    expect(newKey).not.toBe(key);
    expect((await call('POST', endpoint('keyed'), { body: {}, headers: { 'x-api-key': key } })).status).toBe(401);
    expect((await call('POST', endpoint('keyed'), { body: {}, headers: { 'x-api-key': newKey } })).status).toBe(200);
    const wrongKind = await call('POST', `${base()}/function-triggers/${trigger.id}/rotate-credentials`, {
      token,
      body: { credentials: ['signingSecret'] },
    });
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body.details[0].field).toBe('credentials');
  });

  it('hmac: the signature covers timestamp, method, path, query and body; stale or moved signatures are refused', async () => {
    const trigger = await createEndpoint('signed', 'echo', { auth: { mode: 'hmac' } });
    const secret: string = trigger.issuedCredentials.signingSecret;
    expect(secret).toMatch(/^ses_/);
    const body = JSON.stringify({ amount: 10 });
    const target = '/endpoints/signed?ref=abc';
    const post = (headers: Record<string, string>, query = '?ref=abc', sent = body) =>
      call('POST', endpoint('signed', query), { body: sent, headers });

    const signed = sign(secret, 'POST', target, body);
    const ok = await post(signed);
    expect(ok.status).toBe(200);
    expect(ok.body.req).toMatchObject({ payload: { amount: 10 }, auth: { mode: 'hmac' } });
    expect(ok.body.req.headers['x-signature']).toBeUndefined();
    // The same signed call again, inside the timestamp's window: a replay, refused.
    const replayed = await post(signed);
    expect(replayed.status).toBe(401);
    expect(replayed.body.error).toContain('used before');
    // The same bytes spelled otherwise are the same signature: upper-case hex, bare hex, base64.
    const hex = signed['x-signature'].slice('sha256='.length);
    for (const spelled of [
      `sha256=${hex.toUpperCase()}`,
      hex,
      `SHA256=${hex}`,
      Buffer.from(hex, 'hex').toString('base64'),
    ]) {
      const again = await post({ ...signed, 'x-signature': spelled });
      expect({ spelled, status: again.status, error: again.body.error }).toEqual({
        spelled,
        status: 401,
        error: expect.stringContaining('used before'),
      });
    }
    // Signed anew (another second), the same call goes through.
    const later = sign(secret, 'POST', target, body, Number(signed['x-signature-timestamp']) + 1);
    expect((await post(later)).status).toBe(200);

    expect((await post(sign(secret, 'POST', target, body), '?ref=abd')).status).toBe(401);
    expect((await post(sign(secret, 'POST', target, body), '?ref=abc', '{"amount":99}')).status).toBe(401);
    expect((await post(sign('ses_wrong', 'POST', target, body))).status).toBe(401);
    // A signature for `?ref=abc` with the body `1.{…}` does not cover `?ref=abc.1` with the body `{…}`: the
    // target's length is signed, so the boundary cannot be moved (before 2026-11-29 both signed the same bytes).
    const moved = await post(sign(secret, 'POST', target, `1.${body}`), '?ref=abc.1', body);
    expect({ status: moved.status, error: moved.body.error }).toEqual({
      status: 401,
      error: expect.stringContaining('does not match'),
    });
    const stale = await post(sign(secret, 'POST', target, body, Math.floor(Date.now() / 1000) - 3600));
    expect(stale.status).toBe(401);
    expect(stale.body.error).toContain('x-signature-timestamp');
  });

  it('modes: any one listed mode lets the call in', async () => {
    const trigger = await createEndpoint('either', 'echo', { auth: { modes: ['bearer', 'apiKey'] } });
    const key = trigger.issuedCredentials.apiKey;
    expect((await call('POST', endpoint('either'), { token, body: {} })).status).toBe(200);
    expect((await call('POST', endpoint('either'), { body: {}, headers: { 'x-api-key': key } })).status).toBe(200);
    const none = await call('POST', endpoint('either'), { body: {} });
    expect(none.status).toBe(401);
    expect(none.body.error).toMatch(/Bearer.*x-api-key/);

    // Leaving apiKey drops the key; taking hmac issues a secret, shown in the update's answer.
    const updated = await call('PUT', `${base()}/function-triggers/${trigger.id}`, {
      token,
      body: { triggerMetadata: { path: 'either', auth: { modes: ['bearer', 'hmac'] } } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.issuedCredentials).toEqual({ signingSecret: expect.stringMatching(/^ses_/) });
    expect(updated.body.credentials.apiKey).toBeNull();
    expect((await call('POST', endpoint('either'), { body: {}, headers: { 'x-api-key': key } })).status).toBe(401);
  });

  it('500 when the function throws, without its message; the run keeps the error', async () => {
    await createEndpoint('broken', 'throws', { auth: { mode: 'public' } });
    const answered = await call('POST', endpoint('broken'), { body: {} });
    expect(answered.status).toBe(500);
    expect(JSON.stringify(answered.body)).not.toContain('the secret reason');
    const run = await finalRun(answered.headers.get('x-strata-run-id'));
    expect(run.status).toBe('failed');
    expect(JSON.stringify(run.error)).toContain('the secret reason');
  });

  it('504 past timeoutMs, and the run is recorded as timed out', async () => {
    await createEndpoint('sluggish', 'slow', { auth: { mode: 'public' }, timeoutMs: 1000 });
    const answered = await call('POST', endpoint('sluggish'), { body: {} });
    expect(answered.status).toBe(504);
    const run = await finalRun(answered.headers.get('x-strata-run-id'));
    expect(run.status).toBe('timed_out');
  });

  it('runs a call whose request is too large to travel in the dispatch (the run is written before it)', async () => {
    await createEndpoint('large', 'echo', { auth: { mode: 'public' } });
    const text = 'z'.repeat(400 * 1024);
    const answered = await call('POST', endpoint('large'), { body: { text } });
    expect(answered.status).toBe(200);
    expect(answered.body.req.payload.text).toBe(text);
    const run = await finalRun(answered.headers.get('x-strata-run-id'));
    expect(run.status).toBe('succeeded');
  });

  it('413 past the body limit; 400 for malformed JSON; text bodies arrive as text', async () => {
    await createEndpoint('bodies', 'echo', { auth: { mode: 'public' } });
    const big = await call('POST', endpoint('bodies'), { body: JSON.stringify({ x: 'y'.repeat(1024 * 1024 + 10) }) });
    expect(big.status).toBe(413);
    const bad = await call('POST', endpoint('bodies'), {
      body: '{"a":',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    const text = await call('POST', endpoint('bodies'), { body: 'a=1', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(200);
    expect(text.body.req.payload).toBe('a=1');

    // A compressed body reaches the function decoded, as on every other route; one that does not decode is refused.
    const compressed = async (encoding: string, body: Buffer) => {
      const res = await fetch(endpoint('bodies'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        body,
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    const zipped = await compressed('gzip', gzipSync(Buffer.from('{"zipped":true}')));
    expect(zipped).toMatchObject({ status: 200, body: { req: { payload: { zipped: true } } } });
    expect(await compressed('gzip', Buffer.from('not gzip'))).toMatchObject({
      status: 400,
      body: { error: 'The body is not valid gzip (Content-Encoding)' },
    });
    expect((await compressed('bogus', Buffer.from('{}'))).status).toBe(415);
    expect(await compressed('gzip', gzipSync(Buffer.alloc(1024 * 1024 + 10, 32)))).toMatchObject({ status: 413 });
  });

  it('an endpoint call does not wait behind queued background jobs', async () => {
    const onDemand = await call('POST', `${base()}/function-triggers`, {
      token,
      body: { name: 'busy-work', functionId: functions['background'], executionType: 'on-demand' },
    });
    const jobs: string[] = [];
    for (let i = 0; i < 4; i++) {
      const executed = await call('POST', `${base()}/function-triggers/${onDemand.body.id}/execute`, {
        token,
        body: {},
      });
      jobs.push(executed.body);
    }
    await createEndpoint('urgent', 'echo', { auth: { mode: 'public' } });
    const answered = await call('POST', endpoint('urgent'), { body: {} });
    expect(answered.status).toBe(200);
    // The worker has one background isolate and four 1.5 s jobs: when the call was answered, most still waited.
    const runs = await runsOf(onDemand.body.id);
    expect(runs.filter((r) => r.status === 'queued' || r.status === 'running').length).toBeGreaterThanOrEqual(3);
  });

  it('re-runs an endpoint run in the background with the stored request', async () => {
    await createEndpoint('replayable', 'echo', { auth: { mode: 'public' } });
    const answered = await call('POST', endpoint('replayable', '?v=2'), { body: { again: true } });
    const runId = answered.headers.get('x-strata-run-id');
    const rerun = await call('POST', `${base()}/function-runs/${runId}/rerun`, { token, body: { reason: 'check' } });
    expect(rerun.status).toBe(200);
    const done = await eventually(async () => {
      const listed = await call('GET', `${base()}/function-runs?jobId=${rerun.body.jobId}`, { token });
      const r = listed.body.runs[0];
      return r && r.status === 'succeeded' ? r : undefined;
    }, 30_000);
    const full = await call('GET', `${base()}/function-runs/${done.id}`, { token });
    expect(full.body).toMatchObject({ isRerun: true, originalRunId: runId });
    expect(JSON.stringify(full.body.result)).toContain('again');
  });

  it('a call its worker has no isolate for goes to another worker over NATS, and only then waits for one of its own', async () => {
    await createEndpoint('nap', 'nap', { auth: { mode: 'public' }, timeoutMs: 10_000 });
    const four = () => Promise.all([1, 2, 3, 4].map(() => call('POST', endpoint('nap'), { body: {} })));
    // The gateway's worker has two endpoint isolates and one background one; this one adds two more.
    const other = await stack.startWorker({
      COMPUTE_WORKER_ISOLATES: '1',
      COMPUTE_WORKER_ENDPOINT_ISOLATES: '1',
      COMPUTE_WORKSPACE_ISOLATES: '2',
    });
    expect(other.url).not.toBe(stack.workerUrl);
    const helped = await four();
    expect(helped.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(helped.map((r) => r.body)).toEqual(['rested', 'rested', 'rested', 'rested']);
    await other.stop();
    // Alone, the fourth call waits in the worker's queue for an isolate (the bursts' own tests: compute-endpoint-bursts).
    const alone = await four();
    expect(alone.map((r) => r.status)).toEqual([200, 200, 200, 200]);
  });

  it('a worker asked to stop answers the calls it is serving before it exits', async () => {
    const trigger = await createEndpoint('last-nap', 'nap', { auth: { mode: 'public' }, timeoutMs: 10_000 });
    const pending = call('POST', endpoint('last-nap'), { body: {} });
    // The worker has the call once its run is recorded.
    await eventually(async () => ((await runsOf(trigger.id)).length > 0 ? true : undefined));
    const stopping = gatewayWorker.stop();
    const answered = await pending;
    expect(answered.status).toBe(200);
    expect(answered.body).toBe('rested');
    await stopping;
    expect((await finalRun(answered.headers.get('x-strata-run-id'))).status).toBe('succeeded');
    gatewayWorker = await stack.startWorker(GATEWAY_WORKER);
  });

  it('serves the odd forms of a call through the worker’s full stack, with the same answers', async () => {
    await createEndpoint('odd-forms', 'echo', { auth: { mode: 'public' }, allowedMethods: ['POST', 'GET'] });
    const encoded = await call('GET', endpoint('odd-forms', '?q=a%20b&q=%C3%A9'));
    expect(encoded.status).toBe(200);
    expect(encoded.body.req).toMatchObject({ method: 'GET', path: '/endpoints/odd-forms', query: { q: ['a b', 'é'] } });
    const refused = await call('DELETE', endpoint('odd-forms', '?x=%20'));
    expect(refused.status).toBe(405);
    expect(refused.headers.get('allow')).toBe('POST, GET');
    expect((await call('POST', endpoint('missing-one', '?x=%20'), { body: {} })).status).toBe(404);
  });
});
