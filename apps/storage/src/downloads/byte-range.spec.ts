import { describe, expect, it } from '@jest/globals';
import { parseRange } from './byte-range.js';

describe('parseRange', () => {
  it.each([
    ['bytes=0-9', { kind: 'part', start: 0, end: 9 }],
    ['bytes=10-', { kind: 'part', start: 10, end: 99 }],
    ['bytes=-10', { kind: 'part', start: 90, end: 99 }],
    ['bytes=-500', { kind: 'part', start: 0, end: 99 }],
    ['bytes=50-5000', { kind: 'part', start: 50, end: 99 }],
    ['bytes=99-99', { kind: 'part', start: 99, end: 99 }],
  ])('%s of 100 bytes', (header, ask) => {
    expect(parseRange(header, 100)).toEqual(ask);
  });

  it.each(['bytes=100-', 'bytes=100-200', 'bytes=-0'])('%s of 100 bytes is unsatisfiable', (header) => {
    expect(parseRange(header, 100)).toEqual({ kind: 'unsatisfiable' });
  });

  it.each([undefined, 'items=0-1', 'bytes=0-1,5-6', 'bytes=9-1', 'bytes=-', 'bytes=a-b', 'bytes=1-2-3'])(
    '%s is answered whole',
    (header) => {
      expect(parseRange(header, 100)).toEqual({ kind: 'whole' });
    },
  );

  it('has nothing to give of an empty file', () => {
    expect(parseRange('bytes=0-', 0)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-1', 0)).toEqual({ kind: 'unsatisfiable' });
  });
});
