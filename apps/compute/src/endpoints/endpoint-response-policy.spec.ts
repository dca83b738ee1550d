import { describe, expect, it } from '@jest/globals';
import {
  acceptedCookie,
  acceptedLocation,
  contentSecurityPolicy,
  endpointCookiePath,
  type CookiePolicy,
} from './endpoint-response-policy.js';

const allowed: CookiePolicy = { allowed: true, path: endpointCookiePath('acme') };

describe('acceptedCookie', () => {
  it('sends no cookie unless the trigger opted in', () => {
    expect(acceptedCookie('a=b; HttpOnly', { ...allowed, allowed: false })).toBeUndefined();
  });

  it('keeps a host-only cookie under the workspace endpoints as it is', () => {
    expect(acceptedCookie('a=b', allowed)).toBe('a=b');
    expect(acceptedCookie('a=b; HttpOnly; Secure; SameSite=Strict; Max-Age=60', allowed)).toBe(
      'a=b; HttpOnly; Secure; SameSite=Strict; Max-Age=60',
    );
    expect(acceptedCookie('a=b; Path=/data/workspace/acme/api/v1/endpoints/login', allowed)).toBe(
      'a=b; Path=/data/workspace/acme/api/v1/endpoints/login',
    );
  });

  it.each([
    ['a=b; Domain=example.com', 'a=b'],
    ['a=b; domain=.example.com; HttpOnly', 'a=b; HttpOnly'],
    ['a=b;Domain=api.strata.example.com;Domain=example.com', 'a=b'],
    ['a=b; DOMAIN =example.com; Secure', 'a=b; Secure'],
  ])('makes %p host-only', (given, sent) => {
    expect(acceptedCookie(given, allowed)).toBe(sent);
  });

  it.each([
    ['a=b; Path=/', 'a=b; Path=/data/workspace/acme/api/v1/endpoints'],
    [
      'a=b; Path=/data/workspace/other/api/v1/endpoints; HttpOnly',
      'a=b; Path=/data/workspace/acme/api/v1/endpoints; HttpOnly',
    ],
    // A prefix of the path that is not a path segment of it is another path.
    ['a=b; Path=/data/workspace/acme/api/v1/endpoints-x', 'a=b; Path=/data/workspace/acme/api/v1/endpoints'],
    ['a=b; path=/docs', 'a=b; Path=/data/workspace/acme/api/v1/endpoints'],
  ])('keeps %p to the workspace endpoints', (given, sent) => {
    expect(acceptedCookie(given, allowed)).toBe(sent);
  });
});

describe('acceptedLocation', () => {
  it.each([
    '/data/workspace/acme/api/v1/endpoints/next',
    'next?x=1',
    'https://app.example.com/back',
    'http://x.test',
    '//cdn.example.com/a',
  ])('sends a redirect to %p', (location) => {
    expect(acceptedLocation(location)).toBe(true);
  });

  it.each([
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    'data:text/html,<script>1</script>',
    'file:///etc/passwd',
    'http://[::1',
  ])('leaves out %p', (location) => {
    expect(acceptedLocation(location)).toBe(false);
  });
});

describe('contentSecurityPolicy', () => {
  it("is the sandbox, with the function's own policy beside it", () => {
    expect(contentSecurityPolicy(undefined)).toBe('sandbox');
    expect(contentSecurityPolicy(' ')).toBe('sandbox');
    expect(contentSecurityPolicy("default-src 'self'")).toEqual(['sandbox', "default-src 'self'"]);
  });
});
