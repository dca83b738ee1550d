import { describe, expect, it } from '@jest/globals';
import { isUUID } from 'class-validator';
import { stepAttemptJobId } from './run-progress.js';

describe('stepAttemptJobId', () => {
  const run = 'orun_01JX0000000000000000';

  it('is one UUID per run, step, attempt and visit, the same every time it is asked', () => {
    const id = stepAttemptJobId(run, 'charge', 1, 0);
    expect(isUUID(id, 'all')).toBe(true);
    expect(stepAttemptJobId(run, 'charge', 1, 0)).toBe(id);
    const others = [
      stepAttemptJobId(run, 'charge', 2, 0),
      stepAttemptJobId(run, 'refund', 1, 0),
      stepAttemptJobId('orun_01JX0000000000000001', 'charge', 1, 0),
      // A loop's next pass, or a retry of the failed run: a new visit.
      stepAttemptJobId(run, 'charge', 1, 3),
    ];
    expect(new Set([id, ...others]).size).toBe(5);
  });
});
