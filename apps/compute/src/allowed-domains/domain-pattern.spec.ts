import { describe, expect, it } from '@jest/globals';
import { isAllowedHost, normaliseDomain } from './domain-pattern.js';

describe('normaliseDomain', () => {
  it('lowercases, maps IDNA, drops a trailing dot, keeps one leading wildcard', () => {
    expect(normaliseDomain('API.Example.com')).toEqual({ domain: 'api.example.com' });
    expect(normaliseDomain('bücher.example.')).toEqual({ domain: 'xn--bcher-kva.example' });
    expect(normaliseDomain(' *.Example.com ')).toEqual({ domain: '*.example.com' });
    expect(normaliseDomain('localhost')).toEqual({ domain: 'localhost' });
  });

  it('refuses addresses, ports, paths, schemes and other wildcards', () => {
    for (const bad of [
      '',
      '127.0.0.1',
      '2130706433',
      '[::1]',
      'example.com:443',
      'https://example.com',
      'example.com/x',
      'a.*.com',
      '*',
      '*.',
      'user@example.com',
      'intranet',
    ]) {
      expect({ bad, result: 'error' in normaliseDomain(bad) }).toEqual({ bad, result: true });
    }
  });

  it('refuses a name with an empty, over-long or hyphen-edged label, with that reason', () => {
    for (const bad of [
      'a..com',
      '..',
      '.example.com',
      '-api.example.com',
      'api-.example.com',
      `${'a'.repeat(64)}.com`,
      'a_b.com',
    ]) {
      expect({ bad, result: normaliseDomain(bad) }).toEqual({
        bad,
        result: { error: expect.stringContaining('is not a valid host name') },
      });
    }
    expect(normaliseDomain(`${'a'.repeat(63)}.example.com`)).toEqual({ domain: `${'a'.repeat(63)}.example.com` });
    expect(normaliseDomain('xn--bcher-kva.example')).toEqual({ domain: 'xn--bcher-kva.example' });
  });
});

describe('isAllowedHost', () => {
  const domains = ['api.example.com', '*.hooks.example.org'];
  it('matches a name exactly, or any name under a wildcard (not the bare domain)', () => {
    expect(isAllowedHost('api.example.com', domains)).toBe(true);
    expect(isAllowedHost('API.example.com.', domains)).toBe(true);
    expect(isAllowedHost('a.b.hooks.example.org', domains)).toBe(true);
    expect(isAllowedHost('hooks.example.org', domains)).toBe(false);
    expect(isAllowedHost('evilapi.example.com', domains)).toBe(false);
    expect(isAllowedHost('api.example.com.evil.net', domains)).toBe(false);
    expect(isAllowedHost('xhooks.example.org', domains)).toBe(false);
  });
});
