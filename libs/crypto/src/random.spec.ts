import { describe, expect, it } from '@jest/globals';
import { freshRandomBytes } from './random.js';

describe('freshRandomBytes', () => {
  it('hands out pieces of the asked size that never repeat, across pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const piece = freshRandomBytes(12);
      expect(piece).toHaveLength(12);
      seen.add(piece.toString('hex'));
    }
    expect(seen.size).toBe(2000);
  });

  it('gives a copy: changing a piece changes nothing handed out later, and large asks work', () => {
    const a = freshRandomBytes(32);
    a.fill(0);
    expect(freshRandomBytes(32).equals(Buffer.alloc(32))).toBe(false);
    expect(freshRandomBytes(5000)).toHaveLength(5000);
  });
});
