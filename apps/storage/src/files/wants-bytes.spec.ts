import { describe, expect, it } from '@jest/globals';
import { wantsBytes } from './files.controller.js';

describe('wantsBytes', () => {
  it('follows alt first', () => {
    expect(wantsBytes('media', 'application/json')).toBe(true);
    expect(wantsBytes('json', 'image/*')).toBe(false);
  });

  it('answers JSON unless the Accept header takes no JSON', () => {
    expect(wantsBytes(undefined, undefined)).toBe(false);
    expect(wantsBytes(undefined, '*/*')).toBe(false);
    expect(wantsBytes(undefined, 'application/json')).toBe(false);
    expect(wantsBytes(undefined, 'text/html, application/xhtml+xml, */*;q=0.8')).toBe(false);
    expect(wantsBytes(undefined, 'image/avif,image/webp,image/*')).toBe(true);
    expect(wantsBytes(undefined, 'text/plain')).toBe(true);
  });
});
