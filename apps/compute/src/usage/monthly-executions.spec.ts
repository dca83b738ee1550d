import { describe, expect, it } from '@jest/globals';
import { monthOf } from './monthly-executions.js';

describe('monthOf', () => {
  it('keys a moment by its calendar month in UTC', () => {
    expect(monthOf(new Date('2026-06-30T23:59:59.999Z'))).toBe('2026-06-01');
    expect(monthOf(new Date('2026-07-01T00:00:00.000Z'))).toBe('2026-07-01');
    // Late evening in New York on the 31st is already the next month in UTC.
    expect(monthOf(new Date('2026-12-31T20:00:00-05:00'))).toBe('2027-01-01');
  });
});
