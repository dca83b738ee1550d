import { describe, expect, it } from '@jest/globals';
import type { LookupAddress, LookupAllOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { Resolver } from './dns-resolver.js';
import { EgressRefusedError, egressLookup, isEgressRefusal } from './egress-lookup.js';

/** A resolver answering fixed addresses for every name, recording what it was asked. */
function answering(addresses: string[] | Error) {
  const asked: { hostname: string; options: LookupAllOptions }[] = [];
  const resolve: Resolver = (hostname, options, callback) => {
    asked.push({ hostname, options });
    if (addresses instanceof Error) return callback(addresses, []);
    callback(
      null,
      addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  };
  return { resolve, asked };
}

/** Calls a lookup as node:net does and answers what it gave back. */
function lookUp(lookup: LookupFunction, hostname: string, all = false) {
  return new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
    lookup(hostname, { all, family: 0 }, (err, address, family) => resolve({ err, address, family })),
  );
}

describe('egressLookup', () => {
  it('answers the first address, or all of them, when every address is global unicast', async () => {
    const { resolve, asked } = answering(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);
    const lookup = egressLookup({ resolve });
    expect(await lookUp(lookup, 'example.com')).toEqual({ err: null, address: '93.184.215.14', family: 4 });
    expect(await lookUp(lookup, 'example.com', true)).toEqual({
      err: null,
      address: [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
      ],
      family: undefined,
    });
    // It always asks for every address, keeping the caller's other options.
    expect(asked[0]).toEqual({ hostname: 'example.com', options: { all: true, family: 0 } });
  });

  it.each([
    [['127.0.0.1'], '127.0.0.1 is in 127.0.0.0/8, Loopback (RFC 1122)'],
    [['8.8.8.8', '10.0.0.7'], '10.0.0.7 is in 10.0.0.0/8, Private-Use (RFC 1918)'],
    [['2606:4700::1111', 'fe80::1%eth0'], 'fe80::1 is in fe80::/10, Link-Local Unicast (RFC 4291)'],
    [['::ffff:169.254.169.254'], '(IPv4-mapped 169.254.169.254) is in 169.254.0.0/16'],
    [['64:ff9b::7f00:1'], '(NAT64 127.0.0.1) is in 127.0.0.0/8'],
    [['2002:7f00:1::1'], 'carrying 127.0.0.1 (Loopback)'],
    [['203.0.113.5'], 'Documentation (TEST-NET-3)'],
  ])('refuses a name that resolves to %j, before any connection', async (addresses, why) => {
    const { resolve } = answering(addresses);
    const { err, address } = await lookUp(egressLookup({ resolve }), 'rebound.example.com');
    expect(isEgressRefusal(err)).toBe(true);
    expect(err).toMatchObject({
      code: 'EEGRESSREFUSED',
      host: 'rebound.example.com',
      message: expect.stringMatching(/^rebound\.example\.com resolves to a non-public address: /),
    });
    expect(err?.message).toContain(why);
    expect(address).toBe('');
  });

  it('refuses localhost names without resolving them, and answers that are not addresses', async () => {
    const { resolve, asked } = answering(['8.8.8.8']);
    const refused = await lookUp(egressLookup({ resolve }), 'api.localhost');
    expect(refused.err).toBeInstanceOf(EgressRefusedError);
    expect(refused.err?.message).toBe(
      'api.localhost names api.localhost, a loopback name (RFC 6761), not a public address',
    );
    expect(asked).toEqual([]);
    const odd = await lookUp(egressLookup(answering(['0x7f.1'])), 'odd.example.com');
    expect(odd.err?.message).toBe('odd.example.com resolves to "0x7f.1", not an IP address');
  });

  it('passes resolution errors through', async () => {
    const notFound = Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' });
    const { err } = await lookUp(egressLookup(answering(notFound)), 'nowhere.example');
    expect(err).toBe(notFound);
    const empty = await lookUp(egressLookup(answering([])), 'empty.example');
    expect(empty.err).toMatchObject({ code: 'ENOTFOUND' });
  });

  it('lets everything through when private destinations are allowed', async () => {
    const lookup = egressLookup({ ...answering(['10.1.2.3']), allowPrivate: true });
    expect(await lookUp(lookup, 'db.internal.example')).toEqual({ err: null, address: '10.1.2.3', family: 4 });
  });

  it('answers localhost names with loopback where private destinations are allowed, without asking DNS', async () => {
    const { resolve, asked } = answering(['8.8.8.8']);
    const lookup = egressLookup({ resolve, allowPrivate: true });
    expect(await lookUp(lookup, 'localhost')).toEqual({ err: null, address: '127.0.0.1', family: 4 });
    expect(await lookUp(lookup, 'api.localhost.', true)).toMatchObject({
      address: [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ],
    });
    expect(asked).toEqual([]);
  });
});
