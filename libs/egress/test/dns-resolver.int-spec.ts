import { execFileSync } from 'node:child_process';
import { lookup as dnsLookup } from 'node:dns';
import { access, closeSync, mkdtempSync, open, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { startDnsServer, type TestDnsServer } from '@strata/testing';
import { DnsResolver, DnsTimeoutError, egressLookup, isEgressRefusal } from '../src/index.js';

/**
 * The egress resolver against a real DNS server on loopback (`startDnsServer`: UDP,
 * packets by dns-packet). Names that never answer must not hold up names that do, a
 * name that never answers must fail with a timeout that says so, and an answer is
 * reused within its TTL without asking the server again. Nothing here measures time:
 * waiting is proved by what is still outstanding, not by how long anything took.
 */
let dns: TestDnsServer;

beforeAll(async () => {
  dns = await startDnsServer({
    'prompt.example.test': { addresses: ['93.184.215.14'], ttl: 60 },
    'dual.example.test': { addresses: ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'], ttl: 120 },
    'brief.example.test': { addresses: ['93.184.215.15'], ttl: 0 },
    'rebound.example.test': { addresses: ['127.0.0.1'], ttl: 60 },
    ...Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`slow${i}.example.test`, { silent: true } as const])),
  });
});

afterAll(async () => {
  await dns?.close();
});

/** A clock the cache reads, moved by the test. */
function manualClock() {
  let ms = 0;
  return { now: () => ms, advance: (by: number) => void (ms += by) };
}

/** Calls a LookupFunction as node:net does. */
function lookUp(lookup: ReturnType<typeof egressLookup>, hostname: string) {
  return new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
    lookup(hostname, { family: 0 }, (err, address) => resolve({ err, address })),
  );
}

describe('DnsResolver, against a DNS server on loopback', () => {
  it('resolves A and AAAA from the configured server, IPv4 first', async () => {
    const resolver = new DnsResolver({ servers: [dns.address] });
    expect(resolver.servers()).toEqual([dns.address]);
    expect(await resolver.resolve('dual.example.test')).toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ]);
    expect(await resolver.resolve('dual.example.test', 6)).toEqual([
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ]);
    await expect(resolver.resolve('nowhere.example.test')).rejects.toMatchObject({
      code: 'ENOTFOUND',
      message: 'nowhere.example.test has no address (ENOTFOUND)',
    });
  });

  it('answers a name again within its TTL without asking the server, and asks once the TTL has passed', async () => {
    const clock = manualClock();
    const resolver = new DnsResolver({ servers: [dns.address], now: clock.now });
    const asked = () => dns.queriesFor('prompt.example.test').length;
    const before = asked();
    expect(await resolver.resolve('prompt.example.test')).toEqual([{ address: '93.184.215.14', family: 4 }]);
    // One query per family: A answered, AAAA "no data" (kept too, or every lookup would ask again).
    expect(asked()).toBe(before + 2);
    clock.advance(29_999);
    expect(await resolver.resolve('prompt.example.test')).toEqual([{ address: '93.184.215.14', family: 4 }]);
    expect(await resolver.resolve('PROMPT.example.test')).toEqual([{ address: '93.184.215.14', family: 4 }]);
    expect(asked()).toBe(before + 2);
    // "No data" is kept 30 s: AAAA is asked again, the A record (60 s) is not.
    clock.advance(1);
    await resolver.resolve('prompt.example.test');
    expect(
      dns
        .queriesFor('prompt.example.test')
        .slice(before)
        .map((q) => q.type),
    ).toEqual(['A', 'AAAA', 'AAAA']);
    // The A record's 60 s are over (and the AAAA's second 30 s).
    clock.advance(30_000);
    await resolver.resolve('prompt.example.test');
    expect(asked()).toBe(before + 5);
    // An answer with a TTL of 0 is not kept; concurrent lookups of a name share one query per family.
    const briefBefore = dns.queriesFor('brief.example.test').length;
    await Promise.all([1, 2, 3].map(() => resolver.resolve('brief.example.test', 4)));
    expect(dns.queriesFor('brief.example.test').length).toBe(briefBefore + 1);
    await resolver.resolve('brief.example.test', 4);
    expect(dns.queriesFor('brief.example.test').length).toBe(briefBefore + 2);
  });

  it('keeps at most cacheSize answers, dropping the least recently used', async () => {
    const resolver = new DnsResolver({ servers: [dns.address], cacheSize: 2 });
    const asked = (name: string) => dns.queriesFor(name).length;
    const [p0, d0] = [asked('prompt.example.test'), asked('dual.example.test')];
    await resolver.resolve('prompt.example.test', 4);
    await resolver.resolve('dual.example.test', 4);
    await resolver.resolve('prompt.example.test', 4); // used: dual is now the oldest
    await resolver.resolve('rebound.example.test', 4); // a third: dual goes
    await resolver.resolve('prompt.example.test', 4);
    await resolver.resolve('dual.example.test', 4);
    expect([asked('prompt.example.test') - p0, asked('dual.example.test') - d0]).toEqual([1, 2]);
  });

  it('answers a prompt name while eight names that never answer are outstanding', async () => {
    // Long enough that none of the eight can time out while the test runs: they are ended by cancel().
    const resolver = new DnsResolver({ servers: [dns.address], timeoutMs: 600_000, tries: 1 });
    const settled: string[] = [];
    const slow = Array.from({ length: 8 }, (_, i) =>
      resolver.resolve(`slow${i}.example.test`, 4).then(
        () => settled.push(`slow${i} answered`),
        (err: NodeJS.ErrnoException) => settled.push(`slow${i} ${err.code}`),
      ),
    );
    // All eight queries are at the server (so all eight are outstanding in the resolver) ...
    for (
      let waited = 0;
      new Set(dns.queries.filter((q) => q.name.startsWith('slow')).map((q) => q.name)).size < 8;
      waited++
    ) {
      if (waited > 10_000) throw new Error('the eight slow queries never reached the server');
      await new Promise((resolve) => setImmediate(resolve));
    }
    // ... and a name that answers is resolved all the same, while none of the eight has settled.
    expect(await resolver.resolve('prompt.example.test', 4)).toEqual([{ address: '93.184.215.14', family: 4 }]);
    expect(settled).toEqual([]);
    resolver.cancel();
    await Promise.all(slow);
    expect(settled.sort()).toEqual(Array.from({ length: 8 }, (_, i) => `slow${i} ECANCELLED`));
  });

  it('fails a name that never answers with a timeout that says so, and keeps no answer for it', async () => {
    const resolver = new DnsResolver({ servers: [dns.address], timeoutMs: 50, tries: 2 });
    const error = await resolver.resolve('slow8.example.test').catch((err: unknown) => err);
    expect(error).toBeInstanceOf(DnsTimeoutError);
    expect(error).toMatchObject({
      code: 'ETIMEOUT',
      message: 'DNS lookup of slow8.example.test timed out: no answer from the DNS server in 2 tries of 50 ms',
    });
    const asked = dns.queriesFor('slow8.example.test').length;
    await expect(resolver.resolve('slow8.example.test')).rejects.toBeInstanceOf(DnsTimeoutError);
    expect(dns.queriesFor('slow8.example.test').length).toBeGreaterThan(asked);
  });

  it('is the egress guard’s resolver: what it answers is still judged (global unicast only)', async () => {
    const resolver = new DnsResolver({ servers: [dns.address] });
    const lookup = egressLookup({ resolve: resolver.lookup });
    expect(await lookUp(lookup, 'prompt.example.test')).toEqual({ err: null, address: '93.184.215.14' });
    const rebound = await lookUp(lookup, 'rebound.example.test');
    expect(isEgressRefusal(rebound.err)).toBe(true);
    expect(rebound.err?.message).toBe(
      'rebound.example.test resolves to a non-public address: 127.0.0.1 is in 127.0.0.0/8, Loopback (RFC 1122)',
    );
    const gone = await lookUp(lookup, 'nowhere.example.test');
    expect(gone.err).toMatchObject({ code: 'ENOTFOUND' });
  });
});

describe('egress lookups and the libuv thread pool', () => {
  /** FIFOs whose opening for reading blocks a pool thread each until a writer opens them. */
  let dir: string;
  let fifos: string[] = [];

  afterEach(() => {
    // Release every blocked thread (a failed test too): opening for writing meets the reader waiting on each FIFO.
    for (const fifo of fifos) closeSync(openSync(fifo, 'w'));
    fifos = [];
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('resolves a name while every pool thread is busy (getaddrinfo would wait for one)', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'pool-'));
    const threads = Number(process.env['UV_THREADPOOL_SIZE'] ?? 4);
    const opened: Promise<void>[] = [];
    for (let i = 0; i < threads; i++) {
      const fifo = path.join(dir, `fifo-${i}`);
      execFileSync('mkfifo', [fifo]);
      fifos.push(fifo);
      opened.push(new Promise((resolve) => open(fifo, 'r', (_err, fd) => (closeSync(fd), resolve()))));
    }
    // Queued behind the opens: it runs only when a pool thread is free.
    let sentinelRan = false;
    const sentinel = new Promise<void>((resolve) => access(dir, () => ((sentinelRan = true), resolve())));
    // What egress lookups used before 2026-11-29: getaddrinfo, on the pool, waits as the sentinel does.
    let getaddrinfoAnswered = false;
    const getaddrinfo = new Promise<void>((resolve) =>
      dnsLookup('localhost', { all: true }, () => ((getaddrinfoAnswered = true), resolve())),
    );
    const resolver = new DnsResolver({ servers: [dns.address] });
    const lookup = egressLookup({ resolve: resolver.lookup });
    expect(await lookUp(lookup, 'dual.example.test')).toEqual({ err: null, address: '93.184.215.14' });
    // No pool thread was free at any moment of the lookup: the sentinel is still waiting.
    expect({ sentinelRan, getaddrinfoAnswered }).toEqual({ sentinelRan: false, getaddrinfoAnswered: false });
    for (const fifo of fifos) closeSync(openSync(fifo, 'w'));
    fifos = [];
    await Promise.all([...opened, sentinel, getaddrinfo]);
    expect({ sentinelRan, getaddrinfoAnswered }).toEqual({ sentinelRan: true, getaddrinfoAnswered: true });
  });
});
