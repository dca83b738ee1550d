import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { StrataApiError } from './api-error.js';
import { clientCredentials, staticToken, type TokenSource } from './token-source.js';
import { Transport, type DeprecationNotice } from './transport.js';

/** What the test server saw, and what it answers next (per path, in order; the last one repeats). */
interface Seen {
  /** When it arrived (performance.now of this process). */
  at: number;
  method: string;
  url: string;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
  body: string;
}
type Answer = { status: number; headers?: Record<string, string>; body?: unknown };

let server: Server;
let origin: string;
let seen: Seen[] = [];
let answers = new Map<string, Answer[]>();

const answer = (path: string, ...list: Answer[]) => answers.set(path, list);
const hits = (path: string) => seen.filter((s) => new URL(s.url, origin).pathname === path);

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({
        at: performance.now(),
        method: req.method!,
        url: req.url!,
        authorization: req.headers.authorization,
        idempotencyKey: req.headers['idempotency-key'] as string | undefined,
        body: Buffer.concat(chunks).toString(),
      });
      const path = new URL(req.url!, 'http://x').pathname;
      const list = answers.get(path) ?? [{ status: 404, body: { error: 'not_found', message: 'no such path' } }];
      const next = list.length > 1 ? list.shift()! : list[0]!;
      const text = next.body === undefined ? '' : typeof next.body === 'string' ? next.body : JSON.stringify(next.body);
      res.writeHead(next.status, {
        ...(typeof next.body === 'object' ? { 'content-type': 'application/json' } : {}),
        ...next.headers,
      });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen = [];
  answers = new Map();
});

/** Retries without waiting for backoff (Retry-After 0 in the answers). */
const transport = (tokens?: TokenSource, onDeprecation?: (n: DeprecationNotice) => void) =>
  new Transport(origin, { tokens, retry: { limit: 2, backoffLimitMs: 1 }, onDeprecation });

const failure = async (promise: Promise<unknown>): Promise<StrataApiError> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof StrataApiError)) throw new Error(`expected a StrataApiError, got ${String(error)}`);
  return error;
};

describe('Transport', () => {
  it('sends JSON with the bearer token and repeated query parameters, and reads JSON back', async () => {
    answer('/things', { status: 200, body: { ok: true } });
    const body = await transport(staticToken('t0')).request<{ ok: boolean }>('POST', '/things', {
      query: { tag: ['a', 'b'], limit: 5, cursor: undefined, gone: null },
      body: { name: 'x' },
    });
    expect(body).toEqual({ ok: true });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.url).toBe('/things?tag=a&tag=b&limit=5');
    expect(seen[0]!.authorization).toBe('Bearer t0');
    expect(JSON.parse(seen[0]!.body)).toEqual({ name: 'x' });
  });

  it.each([
    [
      'general',
      {
        error: 'Bad Request',
        message: 'Validation failed',
        code: 'VALIDATION_ERROR',
        requestId: 'r1',
        details: [{ field: 'name', message: 'name is required' }],
      },
      {
        code: 'VALIDATION_ERROR',
        message: 'Validation failed',
        requestId: 'r1',
        fieldErrors: [{ field: 'name', message: 'name is required' }],
      },
    ],
    [
      'functions',
      { error: 'Function not found.', statusCode: 404 },
      { code: undefined, message: 'Function not found.', requestId: undefined, fieldErrors: [] },
    ],
    [
      'records',
      { error: { code: 'RECORD_NOT_FOUND', message: 'Record not found', details: { id: 'x' } } },
      { code: 'RECORD_NOT_FOUND', message: 'Record not found', requestId: undefined, fieldErrors: [] },
    ],
    [
      'orchestration',
      {
        error: 'validation_error',
        message: 'Invalid orchestration',
        details: [{ field: 'steps[0].id', message: 'is required' }],
      },
      {
        code: 'validation_error',
        message: 'Invalid orchestration',
        requestId: undefined,
        fieldErrors: [{ field: 'steps[0].id', message: 'is required' }],
      },
    ],
  ])('reads the %s error shape into a StrataApiError', async (_shape, body, expected) => {
    answer('/e', { status: 404, body });
    const error = await failure(transport().request('GET', '/e'));
    expect(error.status).toBe(404);
    expect({
      code: error.code,
      message: error.message,
      requestId: error.requestId,
      fieldErrors: error.fieldErrors,
    }).toEqual(expected);
    expect(error.body).toEqual(body);
    expect(hits('/e')).toHaveLength(1); // a 404 is never retried
  });

  it('retries a 429 whatever the method, after its Retry-After', async () => {
    answer(
      '/limited',
      { status: 429, headers: { 'retry-after': '1' }, body: { error: 'Too Many Requests', message: 'slow down' } },
      { status: 201, body: { id: 1 } },
    );
    await expect(transport().request('POST', '/limited', { body: {} })).resolves.toEqual({ id: 1 });
    const [first, second] = hits('/limited');
    expect(second).toBeDefined();
    // Not before the second the answer asked for (a lower bound: a busy machine only adds to it).
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(990);
  });

  it('reports the last 429 with its Retry-After once the retries are used up', async () => {
    answer('/limited', {
      status: 429,
      headers: { 'retry-after': '0' },
      body: { error: 'Too Many Requests', message: 'slow down' },
    });
    const error = await failure(transport().request('GET', '/limited'));
    expect(error.status).toBe(429);
    expect(error.retryAfterSeconds).toBe(0);
    expect(error.message).toBe('slow down');
    expect(hits('/limited')).toHaveLength(3);
  });

  it('retries a 5xx of a GET, but not of a POST, PUT or DELETE without an Idempotency-Key or If-Match', async () => {
    answer(
      '/flaky',
      { status: 503, headers: { 'retry-after': '0' }, body: { error: 'Unavailable', message: 'later' } },
      { status: 200, body: { ok: 1 } },
    );
    await expect(transport().request('GET', '/flaky')).resolves.toEqual({ ok: 1 });
    expect(hits('/flaky')).toHaveLength(2);

    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      seen = [];
      answer('/write', { status: 500, body: { error: 'Internal', message: 'boom' } }, { status: 201, body: { ok: 1 } });
      const error = await failure(transport().request(method, '/write', { body: {} }));
      expect(error.status).toBe(500);
      expect(hits('/write')).toHaveLength(1);
    }

    // A PUT that names the version it replaces cannot apply twice: retried.
    seen = [];
    answer(
      '/write',
      { status: 502, body: { error: 'Bad Gateway', message: 'upstream' } },
      { status: 200, body: { ok: 2 } },
    );
    await expect(transport().request('PUT', '/write', { body: {}, headers: { 'if-match': '"3"' } })).resolves.toEqual({
      ok: 2,
    });
    expect(hits('/write')).toHaveLength(2);
  });

  it('retries a 5xx of a POST that carries an Idempotency-Key, with the same key', async () => {
    answer(
      '/write',
      { status: 502, body: { error: 'Bad Gateway', message: 'upstream' } },
      { status: 201, body: { ok: 1 } },
    );
    await expect(transport().request('POST', '/write', { body: {}, idempotencyKey: 'k-1' })).resolves.toEqual({
      ok: 1,
    });
    expect(hits('/write').map((s) => s.idempotencyKey)).toEqual(['k-1', 'k-1']);
  });

  it('renews a refused token once when its source can renew, and never retries a 403', async () => {
    let issued = 0;
    const renewing: TokenSource = {
      renewable: true,
      token: () => Promise.resolve(`t${issued}`),
      invalidate: () => {
        issued++;
      },
    };
    answer(
      '/me',
      { status: 401, body: { error: 'Unauthorized', message: 'expired' } },
      { status: 200, body: { me: 1 } },
    );
    await expect(transport(renewing).request('GET', '/me')).resolves.toEqual({ me: 1 });
    expect(hits('/me').map((s) => s.authorization)).toEqual(['Bearer t0', 'Bearer t1']);

    seen = [];
    answer('/me', { status: 401, body: { error: 'Unauthorized', message: 'expired' } });
    expect((await failure(transport(staticToken('fixed')).request('GET', '/me'))).status).toBe(401);
    expect(hits('/me')).toHaveLength(1);

    seen = [];
    answer('/forbidden', { status: 403, body: { error: 'Forbidden', message: 'no' } });
    expect((await failure(transport(renewing).request('GET', '/forbidden'))).status).toBe(403);
    expect(hits('/forbidden')).toHaveLength(1);
  });

  it('sends no token and renews none for a request without the bearer, and never retries one with retry: false', async () => {
    let renewals = 0;
    const renewing: TokenSource = {
      renewable: true,
      token: () => Promise.resolve('t'),
      invalidate: () => {
        renewals++;
      },
    };
    answer('/open', { status: 401, body: { error: 'Unauthorized', message: 'needs a key' } });
    expect((await failure(transport(renewing).request('POST', '/open', { body: {}, bearer: false }))).status).toBe(401);
    expect(hits('/open').map((s) => s.authorization)).toEqual([undefined]);
    expect(renewals).toBe(0);

    answer('/signed', {
      status: 429,
      headers: { 'retry-after': '0' },
      body: { error: 'Too Many Requests', message: 'x' },
    });
    const raw = '{"b":1,"a":2}';
    const refused = await failure(
      transport().request('POST', '/signed', {
        text: raw,
        headers: { 'content-type': 'application/json' },
        retry: false,
      }),
    );
    expect(refused.status).toBe(429);
    // Sent once, with its bytes exactly as given.
    expect(hits('/signed').map((s) => s.body)).toEqual([raw]);
  });

  it('tells of deprecated routes with their sunset and successor', async () => {
    answer('/smart-queries/x', {
      status: 200,
      headers: {
        deprecation: 'true',
        sunset: 'Thu, 29 Oct 2026 00:00:00 GMT',
        link: '</saved-queries/x>; rel="successor-version"',
      },
      body: { data: [] },
    });
    const notices: DeprecationNotice[] = [];
    await transport(undefined, (n) => notices.push(n)).request('GET', '/smart-queries/x');
    expect(notices).toEqual([
      {
        kind: 'route',
        method: 'GET',
        url: `${origin}/smart-queries/x`,
        sunset: 'Thu, 29 Oct 2026 00:00:00 GMT',
        successor: '/saved-queries/x',
      },
    ]);
  });

  it('answers a text body as text and an empty one as undefined', async () => {
    answer('/text', { status: 200, body: 'job-1' });
    answer('/empty', { status: 204 });
    await expect(transport().request('GET', '/text')).resolves.toBe('job-1');
    await expect(transport().request('DELETE', '/empty')).resolves.toBeUndefined();
  });
});

describe('clientCredentials', () => {
  it('shares one token request, keeps the token until shortly before it expires, and renews after invalidate', async () => {
    const tokens: string[] = [];
    answers.set('/oidc/token', [{ status: 200, body: { access_token: 'a', token_type: 'Bearer', expires_in: 600 } }]);
    let now = 1_000_000;
    const source = clientCredentials({
      authUrl: origin,
      clientId: 'ci_1',
      clientSecret: 'sk_1',
      now: () => now,
      renewBeforeMs: 60_000,
    });
    tokens.push(...(await Promise.all([source.token(), source.token(), source.token()])));
    expect(hits('/oidc/token')).toHaveLength(1);
    expect(new URLSearchParams(hits('/oidc/token')[0]!.body).get('grant_type')).toBe('client_credentials');

    now += 539_000; // 1 s before the renewal point (600 s - 60 s)
    await source.token();
    expect(hits('/oidc/token')).toHaveLength(1);
    now += 1_000;
    await source.token();
    expect(hits('/oidc/token')).toHaveLength(2);

    source.invalidate();
    await source.token();
    expect(hits('/oidc/token')).toHaveLength(3);
    expect(tokens).toEqual(['a', 'a', 'a']);
  });

  it('reports the status of a token answer that is not JSON', async () => {
    answers.set('/oidc/token', [{ status: 502, body: '<html>Bad Gateway</html>' }]);
    const source = clientCredentials({ authUrl: origin, clientId: 'ci_1', clientSecret: 'sk_1' });
    expect(await failure(source.token())).toMatchObject({ status: 502, message: 'token request failed (502)' });
  });

  it('fails with the token endpoint’s error', async () => {
    answers.set('/oidc/token', [
      { status: 401, body: { error: 'invalid_client', error_description: 'client authentication failed' } },
    ]);
    const source = clientCredentials({ authUrl: origin, clientId: 'ci_1', clientSecret: 'wrong' });
    const error = await failure(source.token());
    expect(error).toMatchObject({
      status: 401,
      code: 'invalid_client',
      message: 'token request failed (401): invalid_client client authentication failed',
      method: 'POST',
      url: `${origin}/oidc/token`,
    });
  });

  it('answers a request whose token renewal is refused with the token endpoint’s StrataApiError', async () => {
    answers.set('/oidc/token', [
      { status: 200, body: { access_token: 'old', token_type: 'Bearer', expires_in: 600 } },
      { status: 401, body: { error: 'invalid_client', error_description: 'client authentication failed' } },
    ]);
    answer('/me', { status: 401, body: { error: 'Unauthorized', message: 'revoked' } });
    const source = clientCredentials({ authUrl: origin, clientId: 'ci_1', clientSecret: 'sk_1' });
    const error = await failure(transport(source).request('GET', '/me'));
    expect(error).toMatchObject({ status: 401, code: 'invalid_client' });
    expect(hits('/me')).toHaveLength(1);
  });
});
