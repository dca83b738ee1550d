import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import type { Resolver } from '@strata/egress';
import { eventually, startDnsServer } from '@strata/testing';
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

/** A resolver that answers these addresses for every name, as a rebinding DNS server would. */
const answering =
  (...addresses: string[]): Resolver =>
  (_host, _opts, cb) =>
    cb(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
const toLoopback = answering('127.0.0.1');

describe('receiver client', () => {
  it('closes an idle keep-alive socket itself, before the receiver would', async () => {
    // A receiver that announces `Keep-Alive: timeout=30` and never closes an idle connection:
    // only the client's own idle timeout can close it (and it must, well before 30 s).
    const sockets: { socket: Socket; closedByClient: boolean }[] = [];
    const receiver = createTcpServer((socket) => {
      const entry = { socket, closedByClient: false };
      sockets.push(entry);
      socket.on('end', () => {
        entry.closedByClient = true;
        socket.end();
      });
      socket.on('error', () => undefined);
      socket.on('data', () =>
        socket.write(
          'HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: keep-alive\r\nkeep-alive: timeout=30\r\n\r\nok',
        ),
      );
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const client = new ReceiverClient({ timeoutMs: 10_000, bodyMaxBytes: 1024, allowPrivate: true, maxSockets: 4 });
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`;
      expect(await client.post(url, {}, '{}')).toMatchObject({ kind: 'response', status: 200 });
      await eventually(() => (sockets[0]?.closedByClient ? true : undefined), 20_000);
      expect(sockets).toHaveLength(1);
    } finally {
      client.close();
      for (const s of sockets) s.socket.destroy();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

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
      error: 'Receiver refused: points to a non-public address: 127.0.0.1 is in 127.0.0.0/8, Loopback (RFC 1122)',
    });
    const before = seen.length;
    const named = await strict.post(`http://receiver.example.test:${port}/ok`, {}, '{}');
    strict.close();
    expect(named).toMatchObject({
      kind: 'error',
      error:
        'Receiver refused: receiver.example.test resolves to a non-public address: 127.0.0.1 is in 127.0.0.0/8, Loopback (RFC 1122)',
    });
    expect(seen.length).toBe(before);

    const lenient = new ReceiverClient({ ...options, resolve: toLoopback });
    const allowed = await lenient.post(`http://127.0.0.1:${port}/ok`, {}, '{}');
    lenient.close();
    expect(allowed).toMatchObject({ kind: 'response', status: 200, body: 'ok' });
  });

  it('refuses literal addresses in any notation the URL parser accepts, before connecting', async () => {
    const strict = new ReceiverClient({ ...options, allowPrivate: false, resolve: toLoopback });
    const before = seen.length;
    for (const host of ['0x7f.1', '2130706433', '127.1', '[::ffff:127.0.0.1]', '[::7f00:1]', '[::1]', 'localhost.']) {
      const result = await strict.post(`http://${host}:${port}/ok`, {}, '{}');
      expect({ host, result }).toEqual({
        host,
        result: { kind: 'error', error: expect.stringMatching(/^Receiver refused: /), durationMs: 0 },
      });
    }
    strict.close();
    expect(seen.length).toBe(before);
  });

  it('refuses a name when any address it resolves to is not global unicast, IPv4 carried in IPv6 included', async () => {
    const before = seen.length;
    for (const [addresses, why] of [
      [['::ffff:127.0.0.1'], '(IPv4-mapped 127.0.0.1) is in 127.0.0.0/8'],
      [['64:ff9b::7f00:1'], '(NAT64 127.0.0.1) is in 127.0.0.0/8'],
      [['8.8.8.8', '127.0.0.1'], '127.0.0.1 is in 127.0.0.0/8'],
    ] as const) {
      const strict = new ReceiverClient({ ...options, allowPrivate: false, resolve: answering(...addresses) });
      const result = await strict.post(`http://rebound.example.test:${port}/ok`, {}, '{}');
      strict.close();
      expect(result).toMatchObject({
        kind: 'error',
        error: expect.stringMatching(/^Receiver refused: rebound\.example\.test resolves to a non-public address: /),
      });
      expect(result.kind === 'error' && result.error).toContain(why);
    }
    expect(seen.length).toBe(before);
  });

  it('resolves a receiver’s name with the DNS servers it is given (WEBHOOKS_DNS_SERVERS), and judges the answer', async () => {
    const dns = await startDnsServer({
      'receiver.example.test': { addresses: ['127.0.0.1'], ttl: 60 },
      'silent.example.test': { silent: true },
    });
    try {
      const before = seen.length;
      const strict = new ReceiverClient({ ...options, allowPrivate: false, dns: { servers: [dns.address] } });
      const refused = await strict.post(`http://receiver.example.test:${port}/ok`, {}, '{}');
      strict.close();
      expect(refused).toMatchObject({
        kind: 'error',
        error:
          'Receiver refused: receiver.example.test resolves to a non-public address: 127.0.0.1 is in 127.0.0.0/8, Loopback (RFC 1122)',
      });
      expect(seen.length).toBe(before);
      expect(dns.queriesFor('receiver.example.test').length).toBeGreaterThan(0);

      // Where private receivers are allowed the same answer is delivered to, and asked only once within its TTL.
      const lenient = new ReceiverClient({ ...options, dns: { servers: [dns.address] } });
      const asked = dns.queriesFor('receiver.example.test').length;
      for (let i = 0; i < 3; i++) {
        expect(await lenient.post(`http://receiver.example.test:${port}/ok`, {}, '{}')).toMatchObject({
          kind: 'response',
          status: 200,
        });
      }
      expect(dns.queriesFor('receiver.example.test').length).toBe(asked + 2);
      // A name whose DNS never answers fails the attempt with a timeout that says so.
      const quick = new ReceiverClient({
        ...options,
        timeoutMs: 60_000,
        dns: { servers: [dns.address], timeoutMs: 20, tries: 1 },
      });
      const silent = await quick.post(`http://silent.example.test:${port}/ok`, {}, '{}');
      quick.close();
      lenient.close();
      expect(silent).toMatchObject({
        kind: 'error',
        error: expect.stringContaining('DNS lookup of silent.example.test timed out'),
      });
    } finally {
      await dns.close();
    }
  });
});
