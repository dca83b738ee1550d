import { describe, expect, it } from '@jest/globals';
import { sniffType } from './sniff.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');

describe('sniffType', () => {
  it('reads binary formats from their signature, whatever was declared', async () => {
    expect(await sniffType(PNG, 'text/plain')).toBe('image/png');
    expect(await sniffType(Buffer.from('%PDF-1.7\n%âãÏÓ\n1 0 obj'), 'image/png')).toBe('application/pdf');
  });

  it('finds HTML and SVG under any declared type', async () => {
    expect(await sniffType(Buffer.from('<!DOCTYPE html><html><script>x</script>'), 'image/png')).toBe('text/html');
    expect(await sniffType(Buffer.from('  <script>alert(1)</script>'), 'text/plain')).toBe('text/html');
    expect(await sniffType(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"></svg>'), 'image/png')).toBe(
      'image/svg+xml',
    );
    expect(await sniffType(Buffer.from('<?xml version="1.0"?>\n<svg onload="x"/>'), 'text/plain')).toBe(
      'image/svg+xml',
    );
  });

  it('keeps a declared plain text type for text, text/plain otherwise', async () => {
    expect(await sniffType(Buffer.from('a,b\n1,2\n'), 'text/csv')).toBe('text/csv');
    expect(await sniffType(Buffer.from('{"a":1}'), 'application/json')).toBe('application/json');
    expect(await sniffType(Buffer.from('hello'), 'image/png')).toBe('text/plain');
    expect(await sniffType(Buffer.from('hello'), undefined)).toBe('text/plain');
  });

  it('calls unknown binary octet-stream', async () => {
    expect(await sniffType(Buffer.from([0, 1, 2, 3, 255, 254]), 'image/png')).toBe('application/octet-stream');
    expect(await sniffType(Buffer.alloc(0), 'image/png')).toBe('text/plain');
  });
});
