import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  associatedData,
  SEAL_PURPOSES,
  triggerSigningSecretBinding,
  type Binding,
  type SealPurpose,
} from './associated-data.js';
import { KeyRing } from './key-ring.js';

const PURPOSES = Object.values(SEAL_PURPOSES);
const ring = () => KeyRing.parse(`1:${randomBytes(32).toString('base64')}`);

describe('associatedData', () => {
  it('gives each purpose its own namespace', () => {
    expect(new Set(PURPOSES).size).toBe(PURPOSES.length);
    const id = randomUUID();
    const bound = new Set(PURPOSES.map((p) => associatedData(p, id)));
    expect(bound.size).toBe(PURPOSES.length);
  });

  it('frames every field with its UTF-8 length, so no split of the same text collides', () => {
    const p = SEAL_PURPOSES.triggerParam;
    expect(associatedData(p, 'a:b', 'c')).not.toBe(associatedData(p, 'a', 'b:c'));
    expect(associatedData(p, 'ab')).not.toBe(associatedData(p, 'a', 'b'));
    expect(associatedData(p, 'a', '')).not.toBe(associatedData(p, 'a'));
    expect(associatedData(p, '1:a,')).not.toBe(associatedData(p, 'a', ''));
    expect(associatedData(p, 'é')).toBe(`12:strata-aad/1,${p.length}:${p},2:é,`);
  });

  it('is injective: different (purpose, fields) lists never give the same associated data', () => {
    // Fields over the characters the framing uses, so that collisions would show if there were any.
    const field = fc.string({ unit: fc.constantFrom('a', '1', ':', ',', 'é', '#'), maxLength: 6 });
    const list = fc.tuple(fc.constantFrom<SealPurpose>(...PURPOSES), fc.array(field, { maxLength: 4 }));
    fc.assert(
      fc.property(list, list, ([p1, f1], [p2, f2]) => {
        const same = p1 === p2 && JSON.stringify(f1) === JSON.stringify(f2);
        expect(associatedData(p1, ...f1) === associatedData(p2, ...f2)).toBe(same);
      }),
      { numRuns: 5000 },
    );
    // The same text cut into fields at other places, purpose included (the likeliest collision).
    const text = fc.string({ unit: fc.constantFrom('a', '1', ':', ','), minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 4 }), fc.array(fc.nat(), { maxLength: 4 }), (t, c1, c2) => {
        const cut = (cuts: number[]) => {
          const at = [...new Set(cuts.map((c) => c % (t.length + 1)))].sort((a, b) => a - b);
          return [0, ...at].map((from, i) => t.slice(from, [...at, t.length][i]));
        };
        const [f1, f2] = [cut(c1), cut(c2)];
        const p = SEAL_PURPOSES.recordSecret;
        expect(associatedData(p, ...f1) === associatedData(p, ...f2)).toBe(JSON.stringify(f1) === JSON.stringify(f2));
      }),
      { numRuns: 5000 },
    );
  });

  it('never equals a binding an earlier release wrote', () => {
    const id = randomUUID();
    for (const p of PURPOSES) {
      expect(associatedData(p, id, 'x')).not.toMatch(/^(compute|inbound|orchestration|webhook|record)[.:-]/);
      expect(associatedData(p, id)).toMatch(/^12:strata-aad\/1,/);
    }
  });

  it('refuses a field that is not well-formed Unicode (a lone surrogate encodes like U+FFFD)', () => {
    expect(() => associatedData(SEAL_PURPOSES.triggerParam, 'id', '\uD800')).toThrow(TypeError);
    expect(associatedData(SEAL_PURPOSES.triggerParam, 'id', '\uFFFD')).toContain('3:\uFFFD,');
  });
});

describe('KeyRing with bindings', () => {
  it('does not open a trigger signing secret as a parameter of the same trigger, whatever its name', () => {
    const keys = ring();
    const trigger = randomUUID();
    const secret = keys.seal('whsec-plain', triggerSigningSecretBinding(trigger));
    for (const name of ['#signingSecret', 'signingSecret', '']) {
      const param: Binding = { aad: associatedData(SEAL_PURPOSES.triggerParam, trigger, name), legacy: [] };
      expect(() => keys.unseal(secret, param)).toThrow(/associated data/);
    }
    expect(keys.unsealString(secret, triggerSigningSecretBinding(trigger))).toBe('whsec-plain');
  });

  it('opens a value sealed the legacy way, says so, and reseals it under the current binding', () => {
    const keys = ring();
    const trigger = randomUUID();
    const binding = triggerSigningSecretBinding(trigger);
    const legacy = keys.encrypt('whsec-old', `compute.triggers.params:${trigger}:#signingSecret`);
    expect(keys.unseal(legacy, binding)).toMatchObject({ binding: 1 });
    const moved = keys.reseal(legacy, binding);
    expect(moved).not.toBe(legacy);
    expect(keys.unseal(moved, binding)).toMatchObject({ binding: 0 });
    expect(keys.decryptString(moved, binding.aad)).toBe('whsec-old');
    // Already where it belongs: left as it is.
    expect(keys.reseal(moved, binding)).toBe(moved);
    expect(() => keys.unseal(legacy, { aad: binding.aad, legacy: [] })).toThrow(/associated data/);
  });
});
