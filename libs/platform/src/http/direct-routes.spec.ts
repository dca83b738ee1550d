import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ErrorCode } from '@strata/contracts';
import { StrataException } from '../errors/strata.exception.js';
import { matchRoute, serveDirectRoutes, type DirectRoute } from './direct-routes.js';

const echo: DirectRoute = {
  method: 'POST',
  pattern: /^\/things\/([a-z]+)$/,
  errorShape: 'functions',
  name: '/things/:name',
  async handle(_req, res, [name]) {
    if (name === 'missing') throw StrataException.notFound('No such thing.');
    if (name === 'busy') {
      throw new StrataException(ErrorCode.UNAVAILABLE, 'Try again.', undefined, { 'Retry-After': '1' });
    }
    if (name === 'broken') throw new Error('a bug');
    res.setHeader('x-handled', 'direct');
    return { status: 202, body: { name } };
  },
};

/** Several methods, and a response the handler writes itself (text, not JSON). */
const text: DirectRoute = {
  method: ['GET', 'PUT'],
  pattern: /^\/notes\/([a-z]+)$/,
  errorShape: 'functions',
  name: '/notes/:name',
  async handle(req, res, [name]) {
    res.writeHead(201, { 'content-type': 'text/plain' }).end(`${req.method} ${name}`);
  },
};

describe('matchRoute', () => {
  it('takes only the plain form: the method, a whole-path match, no percent sign anywhere', () => {
    expect(matchRoute([echo], 'POST', '/things/abc')?.params).toEqual(['abc']);
    expect(matchRoute([echo], 'POST', '/things/abc?x=1')?.params).toEqual(['abc']);
    expect(matchRoute([echo], 'GET', '/things/abc')).toBeUndefined();
    expect(matchRoute([echo], 'POST', '/things/abc/')).toBeUndefined();
    expect(matchRoute([echo], 'POST', '/things/a%62c')).toBeUndefined();
    expect(matchRoute([echo], 'POST', '/things/abc?x=%zz')).toBeUndefined();
    expect(matchRoute([echo], 'POST', '/other/things/abc')).toBeUndefined();
    expect(matchRoute([echo], 'POST', undefined)).toBeUndefined();
  });

  it('takes each of a route’s methods and no other', () => {
    expect(matchRoute([echo, text], 'GET', '/notes/abc')?.route).toBe(text);
    expect(matchRoute([echo, text], 'PUT', '/notes/abc')?.params).toEqual(['abc']);
    expect(matchRoute([echo, text], 'POST', '/notes/abc')).toBeUndefined();
    expect(matchRoute([echo, text], undefined, '/notes/abc')).toBeUndefined();
  });
});

describe('serveDirectRoutes', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.setHeader('x-handled', 'fallback');
      res.writeHead(200).end('fallback');
    });
    serveDirectRoutes(server, [echo, text]);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const post = (path: string, headers: Record<string, string> = {}, method = 'POST') =>
    new Promise<{ status: number; headers: IncomingMessage['headers']; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end('{}');
    });

  it('answers a matching request with its JSON and a request id', async () => {
    const answered = await post('/things/abc');
    expect(answered.status).toBe(202);
    expect(answered.headers['x-handled']).toBe('direct');
    expect(answered.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answered.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(answered.body)).toEqual({ name: 'abc' });
    expect((await post('/things/abc', { 'x-request-id': 'caller-id-123' })).headers['x-request-id']).toBe(
      'caller-id-123',
    );
  });

  it('leaves the response to a handler that wrote it itself', async () => {
    const answered = await post('/notes/abc', {}, 'PUT');
    expect(answered.status).toBe(201);
    expect(answered.headers['content-type']).toBe('text/plain');
    expect(answered.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answered.body).toBe('PUT abc');
    expect((await post('/notes/abc')).body).toBe('fallback');
  });

  it('hands every other request to the listener it replaced', async () => {
    for (const path of ['/things/a%62c', '/things/abc/', '/elsewhere']) {
      const answered = await post(path);
      expect(answered.headers['x-handled']).toBe('fallback');
      expect(answered.body).toBe('fallback');
    }
  });

  it('answers errors in the route’s error shape, with the exception’s headers; an unexpected one is a 500', async () => {
    const missing = await post('/things/missing');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toEqual({ error: 'No such thing.', statusCode: 404 });
    const busy = await post('/things/busy');
    expect(busy.status).toBe(503);
    expect(busy.headers['retry-after']).toBe('1');
    const broken = await post('/things/broken', { 'x-request-id': 'caller-id-456' });
    expect(broken.status).toBe(500);
    expect(JSON.parse(broken.body)).toEqual({
      error: 'Internal server error (request id caller-id-456)',
      statusCode: 500,
    });
  });
});
