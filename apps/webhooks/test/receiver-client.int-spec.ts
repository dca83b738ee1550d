import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { lookup as dnsLookup } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ReceiverClient } from '../src/receivers/receiver-client.js';

let server: Server;
let port: number;
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.url ?? '');
    if (req.url === '/redirect') {
      res.writeHead(307, { location: `http://127.0.0.1:${port}/target` });
      res.end();
    } else if (req.url === '/huge') {
      res.writeHead(200);
      const chunk = 'y'.repeat(64 * 1024);
      // An endless body: the client must stop reading on its own.
      const pump = () => {
        while (res.write(chunk));
        res.once('drain', pump);
      };
      pump();
    } else if (req.url === '/hang') {
      // Never answers.
    } else {
      res.writeHead(200);
      res.end('ok');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const options = { timeoutMs: 1000, bodyMaxBytes: 100, allowPrivate: true, maxSockets: 4 };

/** A resolver that answers 127.0.0.1 for every name, as a rebinding DNS server would. */
const toLoopback = ((_host: string, _opts: unknown, cb: (e: null, a: { address: string; family: number }[]) => void) =>
  cb(null, [{ address: '127.0.0.1', family: 4 }])) as unknown as typeof dnsLookup;

describe('receiver client', () => {
  it('answers a 3xx as it is, without following the redirect', async () => {
    const client = new ReceiverClient(options);
    const result = await client.post(`http://127.0.0.1:${port}/redirect`, {}, '{}');
    client.close();
    expect(result).toMatchObject({ kind: 'response', status: 307 });
    expect(seen).not.toContain('/target');
  });

  it('reads at most the bound of a response body and stops an endless one', async () => {
    const client = new ReceiverClient(options);
    const result = await client.post(`http://127.0.0.1:${port}/huge`, {}, '{}');
    client.close();
    expect(result).toMatchObject({ kind: 'response', status: 200, body: 'y'.repeat(100) });
  });

  it('gives up on a receiver that never answers after the timeout', async () => {
    const client = new ReceiverClient(options);
    const result = await client.post(`http://127.0.0.1:${port}/hang`, {}, '{}');
    client.close();
    expect(result).toMatchObject({ kind: 'error', error: 'Timed out after 1000 ms' });
  });

  it('refuses literal private addresses and names that resolve to one, unless allowed', async () => {
    const strict = new ReceiverClient({ ...options, allowPrivate: false, resolve: toLoopback });
    const literal = await strict.post(`http://127.0.0.1:${port}/ok`, {}, '{}');
    expect(literal).toMatchObject({
      kind: 'error',
      error: expect.stringMatching(/^Receiver refused: points to a private/),
    });
    const before = seen.length;
    const named = await strict.post(`http://receiver.example.test:${port}/ok`, {}, '{}');
    strict.close();
    expect(named).toMatchObject({
      kind: 'error',
      error: 'Receiver refused: receiver.example.test resolves to a private address (127.0.0.1)',
    });
    expect(seen.length).toBe(before);

    const lenient = new ReceiverClient({ ...options, resolve: toLoopback });
    const allowed = await lenient.post(`http://127.0.0.1:${port}/ok`, {}, '{}');
    lenient.close();
    expect(allowed).toMatchObject({ kind: 'response', status: 200, body: 'ok' });
  });
});
