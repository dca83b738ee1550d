import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { KeyRing } from './key-ring.js';
import { constantTimeEqual } from './compare.js';
import { hashPassword, verifyPassword } from './password.js';
import { newClientId, newClientSecret, newPublishableKey, newSortableId } from './ids.js';

const key = () => randomBytes(32).toString('base64');

describe('KeyRing', () => {
  it('round-trips and records the key version', () => {
    const ring = KeyRing.parse(`1:${key()}`);
    const sealed = ring.encrypt('secret value', 'aad');
    expect(KeyRing.versionOf(sealed)).toBe(1);
    expect(ring.decryptString(sealed, 'aad')).toBe('secret value');
    expect(sealed).not.toContain('secret');
  });

  it('keeps old values readable after a new key becomes active', () => {
    const k1 = key();
    const old = KeyRing.parse(`1:${k1}`).encrypt('v1');
    const ring = KeyRing.parse(`1:${k1},2:${key()}`);
    expect(ring.activeVersion).toBe(2);
    expect(ring.decryptString(old)).toBe('v1');
    expect(KeyRing.versionOf(ring.encrypt('v2'))).toBe(2);
  });

  it('refuses tampering, other associated data and unknown versions', () => {
    const ring = KeyRing.parse(`1:${key()}`);
    const sealed = ring.encrypt('x', 'a');
    expect(() => ring.decrypt(sealed, 'b')).toThrow();
    const parts = sealed.split('.');
    parts[7] = Buffer.from('tampered').toString('base64url');
    expect(() => ring.decrypt(parts.join('.'), 'a')).toThrow();
    expect(() => KeyRing.parse(`2:${key()}`).decrypt(sealed, 'a')).toThrow(/version 1/);
    expect(() => KeyRing.parse('1:c2hvcnQ=')).toThrow(/32 bytes/);
  });
});

describe('secrets and ids', () => {
  it('compares in constant time and handles different lengths', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
  });

  it('hashes passwords with scrypt and verifies them', async () => {
    const hash = await hashPassword('correct horse');
    expect(hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(await verifyPassword('correct horse', hash)).toBe(true);
    expect(await verifyPassword('wrong horse', hash)).toBe(false);
    expect(await verifyPassword('x', 'garbage')).toBe(false);
  });

  it('generates the spec id formats', () => {
    expect(newClientId()).toMatch(/^ci_[0-9a-f]{24}$/);
    expect(newClientSecret()).toMatch(/^sk_[0-9a-f]{64}$/);
    expect(newPublishableKey()).toMatch(/^pk_live_[A-Za-z0-9_-]{43}$/);
    const a = newSortableId(1_000);
    const b = newSortableId(2_000);
    expect(a).toHaveLength(20);
    expect(a < b).toBe(true);
  });
});
