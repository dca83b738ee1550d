import { describe, expect, it } from '@jest/globals';
import {
  delayAfter,
  retryAfterSeconds,
  standing,
  waitUntil,
  withFailure,
  withoutFailure,
  type ThrottlePolicy,
} from './throttle-policy.js';

const policy: ThrottlePolicy = { freeFailures: 3, baseDelayMs: 1000, maxDelayMs: 60_000, memoryMs: 600_000 };

describe('sign-in throttle policy', () => {
  it('lets the free failures through, then doubles the wait with each failure up to the cap', () => {
    expect([0, 1, 2].map((f) => delayAfter(f, policy))).toEqual([0, 0, 0]);
    expect([3, 4, 5, 6, 7, 8, 9].map((f) => delayAfter(f, policy))).toEqual([
      1000, 2000, 4000, 8000, 16_000, 32_000, 60_000,
    ]);
    expect(delayAfter(10_000, policy)).toBe(60_000);
  });

  it('makes the next attempt wait from the last failure, and only past the free failures', () => {
    let record = withFailure(undefined, 0, policy);
    record = withFailure(record, 10, policy);
    expect(waitUntil(record, 10, policy)).toBeUndefined();
    record = withFailure(record, 20, policy);
    expect(record).toEqual({ failures: 3, lastFailureAt: 20 });
    expect(waitUntil(record, 20, policy)).toBe(1020);
    expect(waitUntil(record, 1019, policy)).toBe(1020);
    expect(waitUntil(record, 1020, policy)).toBeUndefined();
    expect(retryAfterSeconds(1020, 20)).toBe(1);
    expect(retryAfterSeconds(1020, 1019)).toBe(1);
    expect(retryAfterSeconds(60_020, 21)).toBe(60);
  });

  it('makes nobody wait within the free failures, even for a failure counted after its own clock read', () => {
    // Concurrent sign-ins of one account: another counted its failure (in advance) at 50, after
    // this one read 10; within the free failures that is no wait.
    expect(waitUntil({ failures: 2, lastFailureAt: 50 }, 10, policy)).toBeUndefined();
    expect(waitUntil({ failures: 3, lastFailureAt: 50 }, 10, policy)).toBe(1050);
  });

  it('forgets failures a memory after the wait of the last one ended', () => {
    const record = { failures: 5, lastFailureAt: 0 };
    // The fifth failure waits 4 s, then the memory runs.
    expect(standing(record, 4000 + 600_000 - 1, policy)).toBe(record);
    expect(standing(record, 4000 + 600_000, policy)).toBeUndefined();
    expect(withFailure(record, 4000 + 600_000, policy)).toEqual({ failures: 1, lastFailureAt: 604_000 });
  });

  it('takes a failure counted in advance back, restoring the time of the one before', () => {
    const before = { failures: 4, lastFailureAt: 100 };
    const charged = withFailure(before, 5000, policy);
    expect(withoutFailure(charged, { before, chargedAt: 5000 })).toEqual(before);
    // Another failure counted since keeps its own time.
    const later = withFailure(charged, 6000, policy);
    expect(withoutFailure(later, { before, chargedAt: 5000 })).toEqual({ failures: 5, lastFailureAt: 6000 });
    expect(
      withoutFailure(withFailure(undefined, 5000, policy), { before: undefined, chargedAt: 5000 }),
    ).toBeUndefined();
  });
});
