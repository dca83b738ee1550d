import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { linkValid, signLink } from './signed-links.js';

const key = randomBytes(32);
const claims = { workspace: 'acme', fileId: '6f1c3a52-8a5e-4a5b-9d1e-3f6a2b1c0d9e', expires: 2_000_000_000 };

describe('signed links', () => {
  it('verifies its own signature until the expiry', () => {
    const sig = signLink(key, claims);
    expect(sig).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(linkValid(key, claims, sig, claims.expires - 1)).toBe(true);
    expect(linkValid(key, claims, sig, claims.expires)).toBe(false);
  });

  it('refuses another key, workspace, file, expiry or a tampered signature', () => {
    const sig = signLink(key, claims);
    const now = claims.expires - 100;
    expect(linkValid(randomBytes(32), claims, sig, now)).toBe(false);
    expect(linkValid(key, { ...claims, workspace: 'acme2' }, sig, now)).toBe(false);
    expect(linkValid(key, { ...claims, fileId: claims.fileId.replace('6', '7') }, sig, now)).toBe(false);
    expect(linkValid(key, { ...claims, expires: claims.expires + 1 }, sig, now)).toBe(false);
    const flipped = (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1);
    expect(linkValid(key, claims, flipped, now)).toBe(false);
    expect(linkValid(key, claims, sig.slice(0, 20), now)).toBe(false);
    expect(linkValid(key, claims, '', now)).toBe(false);
  });

  it('keeps fields apart (no two claims sign the same text)', () => {
    const a = signLink(key, { workspace: 'a1', fileId: '2', expires: 3 });
    const b = signLink(key, { workspace: 'a', fileId: '12', expires: 3 });
    expect(a).not.toBe(b);
  });
});
