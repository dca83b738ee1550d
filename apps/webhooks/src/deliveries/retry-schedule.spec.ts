import { describe, expect, it } from '@jest/globals';
import { MAX_ATTEMPTS, RetrySchedule } from './retry-schedule.js';

const SPEC = RetrySchedule.parse('30000,120000,600000,1800000', 10_000);

describe('retry schedule', () => {
  it.each([
    [1, 30_000],
    [2, 120_000],
    [3, 600_000],
    [4, 1_800_000],
  ])('after attempt %i fails, the next comes %i ms later', (attempt, delay) => {
    expect(SPEC.afterFailure(attempt)).toEqual({ status: 'retrying', delayMs: delay });
  });

  it('fails the delivery after the fifth attempt, and never allows a sixth', () => {
    expect(MAX_ATTEMPTS).toBe(5);
    expect(SPEC.afterFailure(5)).toEqual({ status: 'failed' });
    expect(SPEC.afterFailure(6)).toEqual({ status: 'failed' });
  });

  it('adds up to the spec total of 42.5 minutes between the first and the last attempt', () => {
    const total = [1, 2, 3, 4].reduce((sum, a) => {
      const next = SPEC.afterFailure(a);
      return sum + (next.status === 'retrying' ? next.delayMs : 0);
    }, 0);
    expect(total).toBe(42.5 * 60_000);
  });

  it('leases a claim until the next due time, but never shorter than the timeout plus a margin', () => {
    expect(SPEC.leases()).toEqual([30_000, 120_000, 600_000, 1_800_000, 15_000]);
    const short = RetrySchedule.parse('100, 100,100 ,100', 10_000);
    expect(short.leases()).toEqual([15_000, 15_000, 15_000, 15_000, 15_000]);
    expect(short.afterFailure(1)).toEqual({ status: 'retrying', delayMs: 100 });
  });

  it('refuses a schedule that does not have four whole delays', () => {
    expect(() => RetrySchedule.parse('1,2,3', 1000)).toThrow(/4 delays/);
    expect(() => RetrySchedule.parse('1,2,3,4,5', 1000)).toThrow(/4 delays/);
    expect(() => RetrySchedule.parse('1,2,x,4', 1000)).toThrow(/4 delays/);
    expect(() => new RetrySchedule([1, 2, -3, 4], 1000)).toThrow(/4 delays/);
  });
});
