import { describe, expect, it } from '@jest/globals';
import { nameProblem, sanitiseOriginalName } from './file-name.js';

describe('nameProblem', () => {
  it.each(['a.png', 'avatars/2026/me.png', 'résumé.pdf', 'a..b.txt', '.hidden', 'x/.config'])('accepts %j', (n) => {
    expect(nameProblem(n)).toBeUndefined();
  });

  it.each([
    ['', /empty/],
    ['../etc/passwd', /'\.\.'/],
    ['a/../../b', /'\.\.'/],
    ['..', /'\.\.'/],
    ['a/./b', /'\.'/],
    ['/etc/passwd', /absolute/],
    ['C:secret', /absolute/],
    ['a\\b', /backslash/],
    ['a\u0000b', /NUL/],
    ['a\nb', /control/],
    ['a\u007fb', /control/],
    ['a//b', /empty segment/],
    ['a/', /empty segment/],
    [' a', /spaces/],
    ['x'.repeat(1025), /1024 bytes/],
    ['\ud800', /Unicode/],
  ])('refuses %j', (n, why) => {
    expect(nameProblem(n)).toMatch(why);
  });
});

describe('sanitiseOriginalName', () => {
  it.each([
    ['photo.png', 'photo.png'],
    ['../../etc/passwd', 'passwd'],
    ['C:\\Users\\me\\cv.pdf', 'cv.pdf'],
    ['..', 'file'],
    ['', 'file'],
    [undefined, 'file'],
    ['a\u0000b\nc.txt', 'abc.txt'],
    ['  spaced.txt  ', 'spaced.txt'],
    ['dir/', 'file'],
  ])('%j becomes %j', (original, expected) => {
    expect(sanitiseOriginalName(original)).toBe(expected);
  });

  it('cuts long names at a character boundary and always gives a valid name', () => {
    const long = 'é'.repeat(300);
    const name = sanitiseOriginalName(long);
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255);
    expect(nameProblem(name)).toBeUndefined();
    for (const odd of ['\ud800x', '.', '/', 'a\\..', ' / ', 'C:'])
      expect(nameProblem(sanitiseOriginalName(odd))).toBeUndefined();
  });
});
