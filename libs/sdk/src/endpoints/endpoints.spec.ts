import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { staticToken } from '../http/token-source.js';
import { Transport } from '../http/transport.js';
import { Endpoints, signEndpointCall } from './endpoints.js';

/** What a local server saw of each call, and the status it answers (then 200). */
let server: Server;
let seen: { url: string; headers: IncomingMessage['headers']; body: string }[] = [];
let statuses: number[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({ url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
      const status = statuses.shift() ?? 200;
      res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '0', 'x-strata-run-id': 'run-1' });
      res.end(JSON.stringify(status < 400 ? { ok: true } : { error: 'Too Many Requests', message: 'slow down' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen = [];
  statuses = [];
});

const endpoints = () =>
  new Endpoints(
    new Transport(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, {
      tokens: staticToken('tok'),
      retry: { limit: 2, backoffLimitMs: 1 },
    }),
    '/data/workspace/acme/api/v1',
  );

describe('Endpoints.invoke', () => {
  it('signs identical calls in different seconds, since the platform takes a signature once', async () => {
    const client = endpoints();
    for (const _ of [1, 2]) {
      const answer = await client.invoke('ping', { body: { n: 1 }, auth: { signingSecret: 'ses_x' } });
      expect(answer).toMatchObject({ status: 200, body: { ok: true }, runId: 'run-1' });
    }
    const [first, second] = seen;
    expect(first!.headers['x-signature']).not.toBe(second!.headers['x-signature']);
    expect(Number(second!.headers['x-signature-timestamp'])).toBeGreaterThan(
      Number(first!.headers['x-signature-timestamp']),
    );
    expect(seen.map((s) => [s.headers.authorization, s.body])).toEqual([
      [undefined, '{"n":1}'],
      [undefined, '{"n":1}'],
    ]);
  });

  it('does not retry what the function may have answered itself, unless asked', async () => {
    statuses = [429];
    await expect(endpoints().invoke('busy', { body: {} })).rejects.toMatchObject({ status: 429 });
    expect(seen).toHaveLength(1);
    seen = [];
    statuses = [429];
    await expect(endpoints().invoke('busy', { body: {}, retry: true })).resolves.toMatchObject({ status: 200 });
    expect(seen).toHaveLength(2);
  });

  it('sends the bearer by default, one content-type, the path without a leading slash, and no body on a GET', async () => {
    await endpoints().invoke('/hook', { text: 'a,b', headers: { 'Content-Type': 'text/csv' }, query: { q: 'x y' } });
    expect(seen[0]).toMatchObject({
      url: '/data/workspace/acme/api/v1/endpoints/hook?q=x+y',
      body: 'a,b',
      headers: { authorization: 'Bearer tok', 'content-type': 'text/csv' },
    });
    await expect(endpoints().invoke('hook', { method: 'get', body: {} })).rejects.toThrow('a GET call carries no body');
  });
});

describe('signEndpointCall', () => {
  const at = new Date('2026-11-29T10:00:00Z');
  const ts = String(at.getTime() / 1000);
  const mac = (input: string) => `sha256=${createHmac('sha256', 'ses_x').update(input).digest('hex')}`;

  it('signs `{timestamp}.{METHOD}.{target bytes}:{target}.{raw body}` (docs/compute.md)', async () => {
    expect(await signEndpointCall('ses_x', 'POST', '/endpoints/orders?x=1', '{"a":1}', at)).toEqual({
      'x-signature-timestamp': ts,
      'x-signature': mac(`${ts}.POST.21:/endpoints/orders?x=1.{"a":1}`),
    });
    // The length counts UTF-8 bytes.
    const accented = await signEndpointCall('ses_x', 'GET', '/endpoints/caf\u00e9', '', at);
    expect(accented['x-signature']).toBe(mac(`${ts}.GET.16:/endpoints/caf\u00e9.`));
  });

  it('signs differently two calls that cut the same bytes into target and body at another place', async () => {
    const one = await signEndpointCall('ses_x', 'POST', '/endpoints/orders?x=1', 'a.b', at);
    const other = await signEndpointCall('ses_x', 'POST', '/endpoints/orders?x=1.a', 'b', at);
    expect(one['x-signature']).not.toBe(other['x-signature']);
  });
});
