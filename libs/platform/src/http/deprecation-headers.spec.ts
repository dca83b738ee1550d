import { describe, expect, it } from '@jest/globals';
import { setDeprecationHeaders } from './deprecation-headers.js';

/** The header store of a response, as node:http keeps it. */
function response() {
  const headers = new Map<string, string>();
  return {
    headers,
    setHeader: (name: string, value: string) => headers.set(name.toLowerCase(), value),
    getHeader: (name: string) => headers.get(name.toLowerCase()),
  };
}

describe('setDeprecationHeaders', () => {
  it('sets Deprecation, Sunset as an HTTP-date and the successor link, filling path parameters', () => {
    const res = response();
    setDeprecationHeaders(res, { sunset: '2026-10-29', successor: '/things/:id' }, { id: 'a b' });
    expect(Object.fromEntries(res.headers)).toEqual({
      deprecation: 'true',
      sunset: 'Thu, 29 Oct 2026 23:59:59 GMT',
      link: '</things/a%20b>; rel="successor-version"',
    });
  });

  it('keeps both links and the earlier sunset when two deprecated parts meet in one request', () => {
    const res = response();
    setDeprecationHeaders(res, { sunset: '2026-10-29', successor: '/saved-queries' });
    setDeprecationHeaders(res, { successor: '/docs/data.json#joins' });
    setDeprecationHeaders(res, { sunset: '2027-01-01', successor: '/docs/data.json#joins' });
    expect(Object.fromEntries(res.headers)).toEqual({
      deprecation: 'true',
      sunset: 'Thu, 29 Oct 2026 23:59:59 GMT',
      link: '</saved-queries>; rel="successor-version", </docs/data.json#joins>; rel="successor-version"',
    });
    setDeprecationHeaders(res, { sunset: '2026-09-10', successor: '/saved-queries' });
    expect(res.headers.get('sunset')).toBe('Thu, 10 Sep 2026 23:59:59 GMT');
  });

  it('sends no Sunset when none is announced', () => {
    const res = response();
    setDeprecationHeaders(res, { successor: '/docs' });
    expect(res.headers.has('sunset')).toBe(false);
  });
});
