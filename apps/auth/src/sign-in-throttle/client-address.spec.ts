import { describe, expect, it } from '@jest/globals';
import { addressKey, parseTrustedProxies } from './client-address.js';

describe('client address', () => {
  it('counts IPv4 whole, IPv4-mapped IPv6 as IPv4 and IPv6 by its /64', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::FFFF:cb00:7107')).toBe('203.0.113.7');
    expect(addressKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
    expect(addressKey(undefined)).toBeUndefined();
    expect(addressKey('not an address')).toBeUndefined();
  });

  it('reads AUTH_TRUSTED_PROXIES as hops or as addresses, subnets and names', () => {
    expect(parseTrustedProxies('loopback, linklocal, uniquelocal')).toEqual(['loopback', 'linklocal', 'uniquelocal']);
    expect(parseTrustedProxies('1')).toBe(1);
    expect(parseTrustedProxies('10.0.0.0/8, 192.168.1.1, fd00::/8, 10.1.0.0/255.255.0.0')).toEqual([
      '10.0.0.0/8',
      '192.168.1.1',
      'fd00::/8',
      '10.1.0.0/255.255.0.0',
    ]);
    for (const bad of ['', 'everyone', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/8/8', 'true']) {
      expect(parseTrustedProxies(bad)).toBeUndefined();
    }
  });
});
