import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '@strata/platform';
import { GatewayConfig, createGateway, listen } from '../src/index.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Sends raw bytes as the body (no re-encoding), with the headers given. */
function send(port: number, method: string, path: string, headers: Record<string, string>, body?: Buffer) {
  return new Promise<Answer>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

const RECORDS = '/data/workspace/acme/api/v1/collections/tasks/records';

/**
 * What the gateway does to a request on its way to a service and to the
 * answer on its way back (the stand-in service records what it received).
 */
describe('the gateway hop', () => {
  const seen: Seen[] = [];
  let upstream: Server;
  let gateway: Server;
  let port: number;

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      if (req.url?.endsWith('/refuse')) {
        // As a service refusing a body it will not read: a 413 before the rest arrives (Node's
        // server reads and drops the rest itself; the gateway must not wait for it).
        res.writeHead(413, { 'content-type': 'application/json' }).end('{"refused":true}');
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        seen.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('latin1'),
        });
        res.setHeader('content-type', 'application/json');
        res.setHeader('set-cookie', ['a=1', 'b=2']);
        res.statusCode = req.method === 'POST' ? 201 : 200;
        res.statusMessage = 'Fine';
        res.end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const config = loadConfig(GatewayConfig, {
      STRATA_ENV: 'development',
      LOG_LEVEL: 'error',
      DATA_SERVICE_URL: url,
      AUTH_SERVICE_URL: url,
      CORS_ORIGINS: 'https://app.example.test',
    });
    gateway = await listen(createGateway(config), 0, '127.0.0.1');
    port = (gateway.address() as AddressInfo).port;
  });

  afterAll(async () => {
    gateway.closeAllConnections();
    upstream.closeAllConnections();
    await Promise.all([gateway, upstream].map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it('streams the body byte for byte with its query, and adds X-Forwarded-* and a request id', async () => {
    seen.length = 0;
    // Not valid UTF-8 and not JSON: a signature over raw bytes must still hold.
    const raw = Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x0a, 0x7d]);
    const answer = await send(
      port,
      'POST',
      `${RECORDS}?select=a&x=%2F`,
      { 'content-type': 'application/octet-stream', 'x-signature': 'sig', host: 'api.example.test:8443' },
      raw,
    );
    expect(answer.status).toBe(201);
    expect(answer.body).toBe('{"ok":true}');
    expect(answer.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    const [got] = seen;
    expect(got?.method).toBe('POST');
    expect(got?.url).toBe(`${RECORDS}?select=a&x=%2F`);
    expect(Buffer.from(got?.body ?? '', 'latin1')).toEqual(raw);
    expect(got?.headers).toMatchObject({
      'x-signature': 'sig',
      host: 'api.example.test:8443',
      'x-forwarded-for': '127.0.0.1',
      'x-forwarded-port': '8443',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'api.example.test:8443',
    });
    expect(got?.headers['x-request-id']).toBe(answer.headers['x-request-id']);
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("keeps a caller's own X-Forwarded-* and a well-formed request id", async () => {
    seen.length = 0;
    const answer = await send(port, 'GET', RECORDS, {
      'x-forwarded-for': '198.51.100.7',
      'x-forwarded-proto': 'https',
      'x-request-id': 'caller-id-0001',
    });
    expect(answer.headers['x-request-id']).toBe('caller-id-0001');
    expect(seen[0]?.headers).toMatchObject({
      'x-forwarded-for': '198.51.100.7',
      'x-forwarded-proto': 'https',
      'x-request-id': 'caller-id-0001',
    });
  });

  it('rewrites a deprecated path for its service and answers with the deprecation headers', async () => {
    seen.length = 0;
    const answer = await send(port, 'GET', '/iam/workspace/acme/api/v1/users?limit=2', {});
    expect(answer.status).toBe(200);
    expect(answer.headers['deprecation']).toBe('true');
    expect(answer.headers['sunset']).toBe('Thu, 29 Oct 2026 23:59:59 GMT');
    expect(answer.headers['link']).toContain('rel="successor-version"');
    expect(seen[0]?.url).toMatch(/\/users\?limit=2$/);
  });

  it('answers CORS preflights itself and exposes its headers to allowed origins only', async () => {
    seen.length = 0;
    const preflight = await send(port, 'OPTIONS', RECORDS, {
      origin: 'https://app.example.test',
      'access-control-request-headers': 'authorization, content-type, x-custom',
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example.test');
    expect(preflight.headers['access-control-allow-headers']).toBe('authorization, content-type, x-custom');
    expect(seen).toHaveLength(0);
    const other = await send(port, 'GET', RECORDS, { origin: 'https://evil.example.test' });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const allowed = await send(port, 'GET', RECORDS, { origin: 'https://app.example.test' });
    expect(allowed.headers['access-control-expose-headers']).toContain('x-request-id');
  });

  it('answers /healthz (GET and HEAD) and unknown paths in the general error shape', async () => {
    const health = await send(port, 'GET', '/healthz', {});
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ status: 'ok' });
    const head = await send(port, 'HEAD', '/healthz', {});
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    const unknown = await send(port, 'GET', '/nowhere?x=1', { 'x-request-id': 'caller-id-0002' });
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toEqual({
      error: 'Not Found',
      code: 'NOT_FOUND',
      message: 'No route for GET /nowhere',
      requestId: 'caller-id-0002',
    });
    expect(unknown.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('answers a path /docs cannot decode 400 and an unknown document 404, through its own routes', async () => {
    const bad = await send(port, 'GET', '/docs/%E0%A4%A.json', {});
    expect(bad.status).toBe(400);
    const missing = await send(port, 'GET', '/docs/nothing.json', {});
    expect(missing.status).toBe(404);
    const other = await send(port, 'POST', '/docs/auth.json', {});
    expect(other.status).toBe(404);
    expect(JSON.parse(other.body)).toMatchObject({ message: 'No route for POST /docs/auth.json' });
  });

  it("passes on a service's answer that comes before the body it did not read, and keeps serving", async () => {
    const big = Buffer.alloc(8 * 1024 * 1024, 0x61);
    const refused = await send(
      port,
      'POST',
      `${RECORDS}/refuse`,
      { 'content-type': 'application/json', 'content-length': String(big.length) },
      big,
    );
    expect(refused.status).toBe(413);
    expect(refused.body).toBe('{"refused":true}');
    const next = await send(port, 'POST', RECORDS, { 'content-type': 'application/json' }, Buffer.from('{}'));
    expect(next.status).toBe(201);
  });
});
