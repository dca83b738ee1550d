import { describe, expect, it } from '@jest/globals';
import { SPEC_BREAKER, breakerId, breakerOf, isOpen, receiverOf, trips } from './circuit-policy.js';

const at = (s: number) => new Date(Date.UTC(2026, 10, 21, 12, 0, 0) + s * 1000);

describe('circuit breaker policy', () => {
  it.each([
    [{ requests: 0, failures: 0 }, false],
    [{ requests: 4, failures: 4 }, false], // too few requests, however bad
    [{ requests: 5, failures: 2 }, false],
    [{ requests: 5, failures: 3 }, true],
    [{ requests: 6, failures: 3 }, true], // exactly 50%
    [{ requests: 10, failures: 4 }, false],
    [{ requests: 100, failures: 50 }, true],
  ])('window %j trips: %s', (traffic, expected) => {
    expect(trips(traffic, SPEC_BREAKER)).toBe(expected);
  });

  it('is closed when it never opened', () => {
    expect(isOpen({ openedAt: null, lastRequestAt: at(0) }, at(1), SPEC_BREAKER)).toBe(false);
  });

  it('stays open until 30 s pass without a request, then closes', () => {
    const state = { openedAt: at(0), lastRequestAt: at(0) };
    expect(isOpen(state, at(0), SPEC_BREAKER)).toBe(true);
    expect(isOpen(state, at(29.999), SPEC_BREAKER)).toBe(true);
    expect(isOpen(state, at(30), SPEC_BREAKER)).toBe(false);
  });

  it('counts the quiet time from the last request sent, when one came after the opening', () => {
    // An attempt already in flight when the circuit opened finished 5 s later.
    const state = { openedAt: at(0), lastRequestAt: at(5) };
    expect(isOpen(state, at(31), SPEC_BREAKER)).toBe(true);
    expect(isOpen(state, at(35), SPEC_BREAKER)).toBe(false);
  });

  it('uses the configured reset time', () => {
    const quick = { ...SPEC_BREAKER, resetMs: 1000 };
    expect(isOpen({ openedAt: at(0), lastRequestAt: null }, at(0.5), quick)).toBe(true);
    expect(isOpen({ openedAt: at(0), lastRequestAt: null }, at(1), quick)).toBe(false);
  });

  it('keys receivers by origin: one breaker for every path and query of a host and port', () => {
    expect(receiverOf('https://hooks.example.test/a?x=1')).toBe(receiverOf('https://hooks.example.test/b'));
    expect(receiverOf('https://hooks.example.test/a')).not.toBe(receiverOf('https://hooks.example.test:8443/a'));
    expect(receiverOf('http://hooks.example.test/a')).not.toBe(receiverOf('https://hooks.example.test/a'));
  });

  it('keys breakers by workspace and origin: tenants sharing a receiver have a breaker each', () => {
    const a = breakerOf('acme', 'https://hooks.example.test/a?x=1');
    expect(a).toEqual({ workspace: 'acme', receiver: 'https://hooks.example.test' });
    expect(breakerId(a)).toBe(breakerId(breakerOf('acme', 'https://hooks.example.test/b')));
    expect(breakerId(a)).not.toBe(breakerId(breakerOf('globex', 'https://hooks.example.test/a?x=1')));
    // No workspace name and origin can be glued into another pair's id.
    expect(breakerId({ workspace: 'a b', receiver: 'c' })).not.toBe(breakerId({ workspace: 'a', receiver: 'b c' }));
  });
});
