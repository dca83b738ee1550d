import { describe, expect, it } from '@jest/globals';
import { nextDueAfter } from './next-due.js';

const at = (iso: string) => new Date(iso);

describe('nextDueAfter', () => {
  it('keeps an interval on its phase and skips what downtime missed', () => {
    const every = { scheduleType: 'interval', interval: 60 } as const;
    expect(nextDueAfter(every, at('2026-01-01T00:01:00Z'), at('2026-01-01T00:01:00.200Z'))).toEqual(
      at('2026-01-01T00:02:00Z'),
    );
    // Ten minutes down: one run now, the next on the original phase, no burst.
    expect(nextDueAfter(every, at('2026-01-01T00:01:00Z'), at('2026-01-01T00:11:30Z'))).toEqual(
      at('2026-01-01T00:12:00Z'),
    );
    expect(nextDueAfter(every, at('2026-01-01T00:01:00Z'), at('2026-01-01T00:02:00Z'))).toEqual(
      at('2026-01-01T00:03:00Z'),
    );
  });

  it('moves cron to the first occurrence after now, and ends a once', () => {
    const cron = { scheduleType: 'cron', cronExpression: '0 * * * *', timezone: 'UTC' } as const;
    expect(nextDueAfter(cron, at('2026-01-01T01:00:00Z'), at('2026-01-01T05:20:00Z'))).toEqual(
      at('2026-01-01T06:00:00Z'),
    );
    expect(nextDueAfter(cron, at('2026-01-01T01:00:00Z'), at('2026-01-01T01:00:00.100Z'))).toEqual(
      at('2026-01-01T02:00:00Z'),
    );
    const once = { scheduleType: 'once', scheduledAt: '2026-01-01T01:00:00.000Z', timezone: 'UTC' } as const;
    expect(nextDueAfter(once, at('2026-01-01T01:00:00Z'), at('2026-01-01T01:00:01Z'))).toBeNull();
  });
});
