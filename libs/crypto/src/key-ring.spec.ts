import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { DATA_KEY_USES, KeyRing } from './key-ring.js';
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

describe('KeyRing data keys', () => {
  const wrappedOf = (envelope: string) => envelope.split('.').slice(2, 5).join('.');
  const ivOf = (envelope: string) => envelope.split('.')[5];

  it('seals DATA_KEY_USES values with one data key, each with its own IV, then makes a new one', () => {
    const k1 = key();
    const ring = KeyRing.parse(`1:${k1}`);
    const sealed = Array.from({ length: DATA_KEY_USES + 1 }, (_, i) => ring.encrypt(`value ${i}`, `aad ${i}`));
    expect(new Set(sealed.slice(0, DATA_KEY_USES).map(wrappedOf)).size).toBe(1);
    expect(wrappedOf(sealed[DATA_KEY_USES]!)).not.toBe(wrappedOf(sealed[0]!));
    expect(new Set(sealed.map(ivOf)).size).toBe(sealed.length);
    // Another replica (a ring of its own) opens every one of them.
    const other = KeyRing.parse(`1:${k1}`);
    for (const i of [0, 1, DATA_KEY_USES - 1, DATA_KEY_USES]) {
      expect(other.decryptString(sealed[i]!, `aad ${i}`)).toBe(`value ${i}`);
    }
  });

  it('opens nothing with a data key moved from another envelope, or with a tampered wrapped key', () => {
    const ring = KeyRing.parse(`1:${key()}`);
    const a = ring.encrypt('a', 'field a');
    const b = ring.encrypt('b', 'field b');
    expect(ring.decryptString(a, 'field a')).toBe('a');
    // Same data key, other associated data: the body does not authenticate.
    expect(() => ring.decrypt(b, 'field a')).toThrow(/associated data/);
    const parts = a.split('.');
    parts[4] = Buffer.from('another wrapped key, 32 bytes lo').toString('base64url');
    expect(() => ring.decrypt(parts.join('.'), 'field a')).toThrow(/does not unwrap/);
    // The genuine data key, opened before, is not a way around the check.
    expect(ring.decryptString(a, 'field a')).toBe('a');
  });

  it('makes a data key under the active version: a ring with a newer active key seals with it', () => {
    const k1 = key();
    const older = KeyRing.parse(`1:${k1}`);
    const newer = KeyRing.parse(`1:${k1},2:${key()}`);
    expect(KeyRing.versionOf(older.encrypt('x'))).toBe(1);
    const sealed = newer.encrypt('x');
    expect(KeyRing.versionOf(sealed)).toBe(2);
    expect(() => older.decrypt(sealed)).toThrow(/version 2/);
  });
});

describe('KeyRing bindings and re-encryption', () => {
  it('opens with whichever candidate binding sealed the value, and says which', () => {
    const ring = KeyRing.parse(`1:${key()}`);
    const legacy = ring.encrypt('v', 'collection:field');
    expect(ring.open(legacy, ['collection:record:field', 'collection:field'])).toMatchObject({
      binding: 1,
      keyVersion: 1,
    });
    expect(ring.open(legacy, ['collection:record:field', 'collection:field']).plaintext.toString()).toBe('v');
    expect(() => ring.open(legacy, ['collection:other-record:field'])).toThrow(/associated data/);
  });

  it('re-encrypts under the active key, rebinding when asked, and leaves a current envelope alone', () => {
    const [k1, k2] = [key(), key()];
    const old = KeyRing.parse(`1:${k1}`).encrypt('value', 'a');
    const ring = KeyRing.parse(`1:${k1},2:${k2}`);
    const moved = ring.reencrypt(old, ['b', 'a'], 'b');
    expect(KeyRing.versionOf(moved)).toBe(2);
    expect(ring.decryptString(moved, 'b')).toBe('value');
    expect(() => ring.decrypt(moved, 'a')).toThrow();
    expect(ring.reencrypt(moved, 'b')).toBe(moved);
    // Once only key 2 is left, the re-encrypted value still opens; the old one cannot.
    const retired = KeyRing.parse(`2:${k2}`);
    expect(retired.decryptString(moved, 'b')).toBe('value');
    expect(() => retired.decrypt(old, 'a')).toThrow(/version 1 is not in the ring/);
  });

  it('lets a newer key be known before it is active', () => {
    const ring = KeyRing.parse(`1:${key()},2:${key()}`, 1);
    expect(ring.activeVersion).toBe(1);
    expect(ring.versions).toEqual([1, 2]);
    expect(KeyRing.versionOf(ring.encrypt('x'))).toBe(1);
    expect(() => KeyRing.parse(`1:${key()}`, 2)).toThrow(/not in the ring/);
  });

  it('recognises the envelope form, and nothing that merely starts like one', () => {
    const ring = KeyRing.parse(`1:${key()}`);
    expect(KeyRing.isEnvelope(ring.encrypt('x', 'a'))).toBe(true);
    expect(KeyRing.isEnvelope(ring.encrypt('', 'a'))).toBe(true);
    expect(KeyRing.isEnvelope('sv1.hello')).toBe(false);
    expect(KeyRing.isEnvelope('sv1.1.a.b.c.d.e.f')).toBe(false);
    expect(KeyRing.isEnvelope(42)).toBe(false);
  });

  it('makes keyed digests that need the key, and says when one cannot be checked', () => {
    const [k1, k2] = [key(), key()];
    const tag = KeyRing.parse(`1:${k1}`).mac('request with a 4-digit pin 1234');
    expect(tag).toMatch(/^m1\.[A-Za-z0-9_-]{43}$/);
    const ring = KeyRing.parse(`1:${k1},2:${k2}`);
    expect(ring.verifyMac('request with a 4-digit pin 1234', tag)).toBe(true);
    expect(ring.verifyMac('request with a 4-digit pin 1235', tag)).toBe(false);
    expect(ring.mac('x')).toMatch(/^m2\./);
    expect(KeyRing.parse(`2:${k2}`).verifyMac('request with a 4-digit pin 1234', tag)).toBeUndefined();
    expect(ring.verifyMac('x', 'a1b2c3')).toBeUndefined();
  });

  it('refuses a truncated authentication tag', () => {
    const ring = KeyRing.parse(`1:${key()}`);
    const parts = ring.encrypt('x', 'a').split('.');
    parts[6] = parts[6]!.slice(0, 6);
    expect(() => ring.decrypt(parts.join('.'), 'a')).toThrow();
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
