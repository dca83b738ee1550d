import { describe, expect, it } from '@jest/globals';
import ipaddr from 'ipaddr.js';
import { classifyAddress, describeVerdict, isGlobalUnicast } from './address-verdict.js';
import { IPV4_BLOCKS, IPV6_BLOCKS } from './special-purpose-blocks.js';
import { REFUSED_V4, REFUSED_V6 } from '../test/expected-registry.js';

/** The first and last address of a CIDR block. */
function edges(prefix: string): [string, string] {
  const isV4 = !prefix.includes(':');
  const [first, last] = isV4
    ? [ipaddr.IPv4.networkAddressFromCIDR(prefix), ipaddr.IPv4.broadcastAddressFromCIDR(prefix)]
    : [ipaddr.IPv6.networkAddressFromCIDR(prefix), ipaddr.IPv6.broadcastAddressFromCIDR(prefix)];
  return [first.toString(), last.toString()];
}

/** Whether the block named in a verdict contains the address (it names where the address is). */
function blockContains(prefix: string, address: string): boolean {
  const net = ipaddr.parseCIDR(prefix);
  const addr = ipaddr.parse(address);
  return addr.kind() === net[0].kind() && addr.match(net);
}

describe('classifyAddress', () => {
  it('has exactly the registry blocks this test expects (a change to the table is deliberate)', () => {
    expect(IPV4_BLOCKS.map((b) => b.prefix).sort()).toEqual([...REFUSED_V4].sort());
    expect(IPV6_BLOCKS.map((b) => b.prefix).sort()).toEqual([...REFUSED_V6].sort());
  });

  describe.each([...REFUSED_V4, ...REFUSED_V6])('block %s', (prefix) => {
    // Inside 64:ff9b::/96 and ::ffff:0:0/96 an address is judged by the IPv4 it carries.
    const judgedByIPv4 = prefix === '64:ff9b::/96' || prefix === '::ffff:0:0/96';
    it.each(edges(prefix))(
      `refuses its edge %s${judgedByIPv4 ? ' (carrying 0.0.0.0 or 255.255.255.255)' : ''}`,
      (address) => {
        const verdict = classifyAddress(address);
        expect(verdict.global).toBe(false);
        if (!verdict.global && !judgedByIPv4)
          expect({
            address,
            block: verdict.block.prefix,
            contains: blockContains(verdict.block.prefix, address),
          }).toEqual({
            address,
            block: verdict.block.prefix,
            contains: true,
          });
      },
    );
  });

  it.each([
    // IPv4 neighbours of refused blocks.
    '1.0.0.0',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '191.255.255.255',
    '192.0.1.0',
    '192.0.3.0',
    '192.31.195.255',
    '192.31.197.0',
    '192.52.192.255',
    '192.52.194.0',
    '192.88.98.255',
    '192.88.100.0',
    '192.167.255.255',
    '192.169.0.0',
    '192.175.47.255',
    '192.175.49.0',
    '198.17.255.255',
    '198.20.0.0',
    '198.51.99.255',
    '198.51.101.0',
    '203.0.112.255',
    '203.0.114.0',
    '223.255.255.255',
    '8.8.8.8',
    // IPv6 neighbours inside 2000::/3.
    '2000::',
    '2001:200::',
    '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff',
    '2001:db9::',
    '2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    '2003::',
    '2620:4f:7fff:ffff:ffff:ffff:ffff:ffff',
    '2620:4f:8001::',
    '3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    '3fff:1000::',
    '3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    '2001:4860:4860::8888',
    '2606:4700:4700::1111',
    // IPv4 carried where it is reached as itself.
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '64:ff9b::8.8.8.8',
    '64:ff9b::101:101',
  ])('lets the global unicast address %s through', (address) => {
    expect(classifyAddress(address)).toMatchObject({ global: true });
    expect(isGlobalUnicast(address)).toBe(true);
  });

  it.each([
    ['1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '1000::/4'],
    ['4000::', '4000::/3'],
    ['::7f00:1', '::/96'],
    ['::127.0.0.1', '::/96'],
    // ipaddr.js alone would read this as ::ffff:8.8.8.8 (IPv4-mapped, global); the socket goes to ::808:808.
    ['::8.8.8.8', '::/96'],
    ['64:ff9b:1::808:808', '64:ff9b:1::/48'],
    ['2002:808:808::', '2002::/16'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', '2001::/32'],
    ['fe80::1%eth0', 'fe80::/10'],
    ['::ffff:127.0.0.1', '127.0.0.0/8'],
    ['64:ff9b::a9fe:a9fe', '169.254.0.0/16'],
  ])('refuses %s (in %s)', (address, prefix) => {
    expect(classifyAddress(address)).toMatchObject({ global: false, block: { prefix } });
    expect(isGlobalUnicast(address)).toBe(false);
  });

  it('decodes the IPv4 address carried by each embedding form and judges it', () => {
    const embedded = (address: string) => {
      const { embedded } = classifyAddress(address);
      return embedded && { form: embedded.form, ipv4: embedded.ipv4, global: embedded.verdict.global };
    };
    expect(embedded('::ffff:7f00:1')).toEqual({ form: 'IPv4-mapped', ipv4: '127.0.0.1', global: false });
    expect(embedded('::7f00:1')).toEqual({ form: 'IPv4-compatible', ipv4: '127.0.0.1', global: false });
    expect(embedded('64:ff9b::7f00:1')).toEqual({ form: 'NAT64', ipv4: '127.0.0.1', global: false });
    expect(embedded('64:ff9b:1::7f00:1')).toEqual({ form: 'local-use NAT64', ipv4: '127.0.0.1', global: false });
    expect(embedded('2002:7f00:1::')).toEqual({ form: '6to4', ipv4: '127.0.0.1', global: false });
    expect(embedded('2002:c000:204:1::1')).toEqual({ form: '6to4', ipv4: '192.0.2.4', global: false });
    // Teredo (RFC 4380 §4): server 65.54.227.120, client 192.0.2.45 stored inverted as 3fff:fdd2.
    expect(embedded('2001:0:4136:e378:8000:63bf:3fff:fdd2')).toEqual({
      form: 'Teredo',
      ipv4: '192.0.2.45',
      global: false,
    });
    expect(embedded('2001:0:4136:e378:8000:63bf:80ff:fffe')).toEqual({
      form: 'Teredo',
      ipv4: '127.0.0.1',
      global: false,
    });
    expect(embedded('2002:808:808::1')).toEqual({ form: '6to4', ipv4: '8.8.8.8', global: true });
    // The unspecified and loopback addresses carry nothing.
    expect(embedded('::')).toBeUndefined();
    expect(embedded('::1')).toBeUndefined();
    expect(embedded('2606:4700::1111')).toBeUndefined();
  });

  it('accepts zone ids and answers canonical addresses', () => {
    expect(classifyAddress('FE80::0001%eth0')).toMatchObject({ address: 'fe80::1', family: 6, global: false });
    expect(classifyAddress('2001:4860:4860:0:0:0:0:8888')).toMatchObject({ address: '2001:4860:4860::8888' });
    expect(classifyAddress('::FFFF:10.0.0.1')).toMatchObject({
      family: 6,
      global: false,
      block: { prefix: '10.0.0.0/8' },
    });
  });

  it.each(['0x7f.1', '127.1', '2130706433', '017700000001', '127.0.0.1.', 'example.com', '', '[::1]', '1.2.3.4/8'])(
    'throws on %j, which is not an IP address in standard notation',
    (text) => {
      expect(() => classifyAddress(text)).toThrow(TypeError);
      expect(isGlobalUnicast(text)).toBe(false);
    },
  );

  it('says where an address is, and what an IPv6 address carries', () => {
    const say = (address: string) => describeVerdict(classifyAddress(address));
    expect(say('127.0.0.1')).toBe('127.0.0.1 is in 127.0.0.0/8, Loopback (RFC 1122)');
    expect(say('203.0.113.7')).toBe('203.0.113.7 is in 203.0.113.0/24, Documentation (TEST-NET-3) (RFC 5737)');
    expect(say('::ffff:169.254.169.254')).toBe(
      '::ffff:a9fe:a9fe (IPv4-mapped 169.254.169.254) is in 169.254.0.0/16, Link Local (RFC 3927)',
    );
    expect(say('2002:7f00:1::')).toBe('2002:7f00:1:: is in 2002::/16, 6to4 (RFC 3056), carrying 127.0.0.1 (Loopback)');
    expect(say('2002:808:808::')).toBe('2002:808:808:: is in 2002::/16, 6to4 (RFC 3056), carrying 8.8.8.8');
    expect(say('8.8.8.8')).toBe('8.8.8.8 is a global unicast address');
    expect(say('64:ff9b::808:808')).toBe('64:ff9b::808:808 (NAT64 8.8.8.8) is a global unicast address');
  });
});
