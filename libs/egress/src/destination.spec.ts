import { describe, expect, it } from '@jest/globals';
import { checkHost, checkUrl, isLocalhostName, parseHost } from './destination.js';

describe('parseHost', () => {
  it.each([
    // IPv4 in the notations WHATWG URL normalises, as the HTTP client will read them.
    ['127.0.0.1', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['0x7f.0x0.0x0.0x1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['017700000001', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['１２７.０.０.１', '127.0.0.1'],
    // IPv6, bracketed or not, with a zone id (raw or as a URL writes it).
    ['[::1]', '::1'],
    ['::1', '::1'],
    ['[::FFFF:127.0.0.1]', '::ffff:7f00:1'],
    ['[::127.0.0.1]', '::7f00:1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['[fe80::1%25eth0]', 'fe80::1'],
    ['[0:0:0:0:0:0:0:1]', '::1'],
  ])('reads %j as the address %s', (host, address) => {
    expect(parseHost(host)).toMatchObject({ kind: 'address', address });
  });

  it.each([
    ['Example.COM', 'example.com'],
    ['example.com.', 'example.com.'],
    ['ＬＯＣＡＬＨＯＳＴ', 'localhost'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['receiver.internal', 'receiver.internal'],
  ])('reads %j as the name %s', (host, name) => {
    expect(parseHost(host)).toEqual({ kind: 'name', name });
  });

  it.each([
    '',
    ' ',
    'a b',
    'a/b',
    'evil.com\\@127.0.0.1',
    'user@host',
    'host:80',
    '[1.2.3.4]',
    '[::1',
    '::1]',
    '1::2::3',
    'foo.0x7f',
    '%31%32%37.0.0.1',
    '[::1]:80',
  ])('refuses %j, which is not a host', (host) => {
    expect(parseHost(host)).toBeUndefined();
  });
});

describe('isLocalhostName', () => {
  it.each(['localhost', 'LOCALHOST', 'localhost.', 'api.localhost', 'a.b.localhost..'])('%s is', (name) => {
    expect(isLocalhostName(name)).toBe(true);
  });
  it.each(['localhost.example.com', 'notlocalhost', 'localhostx', 'example.com'])('%s is not', (name) => {
    expect(isLocalhostName(name)).toBe(false);
  });
});

describe('checkUrl', () => {
  it.each([
    'http://127.0.0.1/x',
    'http://0x7f.1/',
    'http://127.1:8080/',
    'http://2130706433/',
    'http://017700000001/',
    'http://127.0.0.1./',
    'http:\\\\127.0.0.1\\x',
    'http://user:pass@127.0.0.1/',
    'http://%31%32%37.0.0.1/',
    'http://0/',
    'http://10.0.0.1/',
    'http://169.254.169.254/latest/meta-data',
    'http://100.64.0.1/',
    'http://192.0.2.1/',
    'http://198.51.100.1/',
    'http://203.0.113.1/',
    'http://198.18.0.1/',
    'http://224.0.0.1/',
    'http://255.255.255.255/',
    'http://[::1]:8080/',
    'http://[::]/',
    'http://[::7f00:1]/',
    'http://[::127.0.0.1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[64:ff9b::7f00:1]/',
    'http://[64:ff9b::10.0.0.1]/',
    'http://[64:ff9b:1::808:808]/',
    'http://[2002:7f00:1::]/',
    'http://[2002:c0a8:101::1]/',
    'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
    'http://[2001:db8::1]/',
    'http://[3fff::1]/',
    'http://[2001:2::1]/',
    'http://[2001:20::1]/',
    'http://[fc00::1]/',
    'http://[fd12:3456::1]/',
    'http://[fe80::1]/',
    'http://[ff02::1]/',
    'https://localhost/',
    'http://localhost./',
    'http://LOCALHOST:3000/',
    'http://api.localhost/',
    'http://ｌｏｃａｌｈｏｓｔ/',
  ])('refuses %s', (url) => {
    expect(checkUrl(url)).toMatchObject({
      kind: 'non-public',
      reason: expect.stringMatching(/^(points to a non-public address: |names )/),
    });
    expect(checkUrl(new URL(url))).toBeDefined();
  });

  it.each([
    'https://hooks.example.com/in',
    'http://8.8.8.8/in',
    'http://receiver.internal/in',
    'http://[2001:4860:4860::8888]/',
    'http://[::ffff:8.8.8.8]/',
    'http://[64:ff9b::8.8.8.8]/',
    'https://localhost.example.com/',
  ])('lets %s through (names are judged on what they resolve to)', (url) => {
    expect(checkUrl(url)).toBeUndefined();
  });

  it('refuses what is not an absolute http(s) URL, whatever the policy', () => {
    for (const allowPrivate of [false, true]) {
      expect(checkUrl('ftp://example.com/', { allowPrivate })).toEqual({
        kind: 'invalid',
        reason: 'must be an http or https URL',
      });
      expect(checkUrl('file:///etc/passwd', { allowPrivate })).toEqual({
        kind: 'invalid',
        reason: 'must be an http or https URL',
      });
      expect(checkUrl('/relative', { allowPrivate })).toEqual({ kind: 'invalid', reason: 'is not an absolute URL' });
      expect(checkUrl('http://[fe80::1%25eth0]/', { allowPrivate })).toEqual({
        kind: 'invalid',
        reason: 'is not an absolute URL',
      });
    }
  });

  it('allows private destinations when the operator allows them', () => {
    for (const url of ['http://127.0.0.1:9000/', 'http://localhost/', 'http://[::1]/', 'http://[2001:db8::1]/'])
      expect(checkUrl(url, { allowPrivate: true })).toBeUndefined();
  });

  it('says why, naming the block and the carried IPv4 address', () => {
    expect(checkUrl('http://0x7f.1/')?.reason).toBe(
      'points to a non-public address: 127.0.0.1 is in 127.0.0.0/8, Loopback (RFC 1122)',
    );
    expect(checkUrl('http://[64:ff9b::a9fe:a9fe]/')?.reason).toBe(
      'points to a non-public address: 64:ff9b::a9fe:a9fe (NAT64 169.254.169.254) is in 169.254.0.0/16, Link Local (RFC 3927)',
    );
    expect(checkUrl('http://localhost./')?.reason).toBe(
      'names localhost., a loopback name (RFC 6761), not a public address',
    );
    expect(checkUrl('http://[2001:db8::1]/')?.verdict).toMatchObject({
      global: false,
      block: { prefix: '2001:db8::/32', name: 'Documentation', reference: 'RFC 3849' },
    });
  });
});

describe('checkHost', () => {
  it('refuses what is not a host, and non-public literals and localhost names unless allowed', () => {
    expect(checkHost('a/b')).toEqual({ kind: 'invalid', reason: 'has an invalid host "a/b"' });
    expect(checkHost('a/b', { allowPrivate: true })).toEqual({ kind: 'invalid', reason: 'has an invalid host "a/b"' });
    expect(checkHost('0x7f.1')?.reason).toContain('127.0.0.0/8');
    expect(checkHost('[::1]')?.reason).toContain('::1/128');
    expect(checkHost('localhost')?.reason).toContain('RFC 6761');
    expect(checkHost('0x7f.1', { allowPrivate: true })).toBeUndefined();
    expect(checkHost('example.com')).toBeUndefined();
    expect(checkHost('1.1.1.1')).toBeUndefined();
  });
});
