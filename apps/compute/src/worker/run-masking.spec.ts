import { describe, expect, it } from '@jest/globals';
import { MIN_EMBEDDED_SECRET_LENGTH, SECRET_MASK, secretMasker, secretTexts } from './run-masking.js';

const M = SECRET_MASK;

describe('secretTexts', () => {
  it('takes the strings and numbers of secret values at any depth, and nothing empty', () => {
    expect(secretTexts(['sk-live', 8642, { user: 'u-name', pin: [1234, true, null] }, '', false]).sort()).toEqual(
      ['1234', '8642', 'sk-live', 'u-name'].sort(),
    );
  });
});

describe('secretMasker', () => {
  const mask = secretMasker(['sk-live-123', 'ab', 'a"b\\c']);

  it('masks a secret wherever it occurs in a text, as written or as JSON escapes it', () => {
    expect(mask.text('token=sk-live-123; again sk-live-123')).toBe(`token=${M}; again ${M}`);
    expect(mask.text(JSON.stringify({ key: 'a"b\\c' }))).toBe(`{"key":"${M}"}`);
    expect(mask.text('a"b\\c')).toBe(M);
  });

  it('masks a short secret only where a whole value equals it', () => {
    expect('ab'.length).toBeLessThan(MIN_EMBEDDED_SECRET_LENGTH);
    expect(mask.text('ab')).toBe(M);
    expect(mask.text('abc cab about')).toBe('abc cab about');
    expect(mask.json({ ab: 'ab', list: ['ab', 'xab'] })).toEqual({ [M]: M, list: [M, 'xab'] });
  });

  it('masks the longest secret first when one contains another', () => {
    const nested = secretMasker(['secret', 'secret-with-suffix']);
    expect(nested.text('x secret-with-suffix y secret')).toBe(`x ${M} y ${M}`);
  });

  it('treats the characters of a regular expression literally', () => {
    const odd = secretMasker(['a.b*c+(d)|[e]$^']);
    expect(odd.text('a.b*c+(d)|[e]$^ and aXbbbc')).toBe(`${M} and aXbbbc`);
  });

  it('masks values and keys in returned JSON, numbers included, and leaves the rest as it was', () => {
    const numbers = secretMasker(secretTexts([8642097531, 'sk-live-123']));
    const returned = {
      success: true,
      data: { pin: 8642097531, other: 8642097532, note: 'pin 8642097531', ['sk-live-123']: 1, __proto__x: null },
    };
    expect(numbers.json(returned)).toEqual({
      success: true,
      data: { pin: M, other: 8642097532, note: `pin ${M}`, [M]: 1, __proto__x: null },
    });
  });

  it('keeps a key named __proto__ an own key', () => {
    const value = JSON.parse('{"__proto__": "sk-live-123"}') as Record<string, string>;
    const masked = mask.json(value) as Record<string, string>;
    expect(Object.hasOwn(masked, '__proto__')).toBe(true);
    expect(JSON.stringify(masked)).toBe(`{"__proto__":"${M}"}`);
  });

  it('changes nothing when the run has no secret', () => {
    const none = secretMasker([]);
    const value = { a: ['sk-live-123'] };
    expect(none.json(value)).toBe(value);
    expect(none.text('sk-live-123')).toBe('sk-live-123');
  });
});
