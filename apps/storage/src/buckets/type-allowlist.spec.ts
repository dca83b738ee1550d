import { describe, expect, it } from '@jest/globals';
import { essenceOf, patternProblem, typeAllowed } from './type-allowlist.js';

describe('typeAllowed', () => {
  it('matches exact types, families and everything', () => {
    expect(typeAllowed('image/png', ['image/png'])).toBe(true);
    expect(typeAllowed('image/png', ['image/*'])).toBe(true);
    expect(typeAllowed('image/svg+xml', ['image/*'])).toBe(true);
    expect(typeAllowed('application/pdf', ['*/*'])).toBe(true);
    expect(typeAllowed('Image/PNG; charset=x', ['image/png'])).toBe(true);
  });

  it('refuses what no entry names', () => {
    expect(typeAllowed('text/html', ['image/*'])).toBe(false);
    expect(typeAllowed('image/png', ['image/jpeg', 'application/pdf'])).toBe(false);
    expect(typeAllowed('imagex/png', ['image/*'])).toBe(false);
    expect(typeAllowed('image/png', [])).toBe(false);
    expect(typeAllowed('not a type', ['*/*'])).toBe(false);
  });
});

describe('patternProblem and essenceOf', () => {
  it.each(['*/*', 'image/*', 'application/pdf', 'application/vnd.ms-excel', 'image/svg+xml'])('accepts %j', (p) => {
    expect(patternProblem(p)).toBeUndefined();
  });
  it.each(['*', 'image', '*/png', 'image/**', 'Image/PNG', 'image/png; q=1', ''])('refuses %j', (p) => {
    expect(patternProblem(p)).toBeDefined();
  });
  it('reads the essence of a header value', () => {
    expect(essenceOf('text/plain; charset=utf-8')).toBe('text/plain');
    expect(essenceOf('garbage')).toBeUndefined();
  });
});
