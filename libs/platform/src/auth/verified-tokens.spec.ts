import { describe, expect, it } from '@jest/globals';
import type { Principal } from './principal.js';
import { VerifiedTokens } from './verified-tokens.js';

const principal = (id: string): Principal => ({
  type: 'user',
  id,
  workspace: 'ws',
  groups: [],
  scopes: [],
  credential: { kind: 'bearer', token: `t-${id}` },
});

describe('VerifiedTokens', () => {
  const now = 1_800_000_000_000;
  const exp = (ms: number) => (now + ms) / 1000;

  it('answers a token verified within the caching time', () => {
    const tokens = new VerifiedTokens(3000);
    tokens.set('a', principal('a'), exp(60_000), now);
    expect(tokens.get('a', now + 2999)?.id).toBe('a');
    expect(tokens.get('b', now)).toBeUndefined();
  });

  it('forgets a token after the caching time even though it has not expired', () => {
    const tokens = new VerifiedTokens(3000);
    tokens.set('a', principal('a'), exp(60_000), now);
    expect(tokens.get('a', now + 3000)).toBeUndefined();
    expect(tokens.get('a', now + 1)).toBeUndefined();
  });

  it('never keeps a token past its exp, nor one already expired', () => {
    const tokens = new VerifiedTokens(3000);
    tokens.set('soon', principal('soon'), exp(1000), now);
    expect(tokens.get('soon', now + 999)?.id).toBe('soon');
    expect(tokens.get('soon', now + 1000)).toBeUndefined();
    tokens.set('gone', principal('gone'), exp(0), now);
    expect(tokens.get('gone', now)).toBeUndefined();
  });

  it('keeps nothing when the caching time is 0', () => {
    const tokens = new VerifiedTokens(0);
    tokens.set('a', principal('a'), exp(60_000), now);
    expect(tokens.get('a', now)).toBeUndefined();
  });

  it('stays bounded: expired entries go first, then the oldest', () => {
    const tokens = new VerifiedTokens(3000);
    for (let i = 0; i < 10_000; i++) tokens.set(`t${i}`, principal(`t${i}`), exp(60_000), now);
    tokens.set('new', principal('new'), exp(60_000), now);
    expect(tokens.get('t0', now)).toBeUndefined();
    expect(tokens.get('t1', now)?.id).toBe('t1');
    expect(tokens.get('new', now)?.id).toBe('new');
  });
});
