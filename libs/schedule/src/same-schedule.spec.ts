import { describe, expect, it } from '@jest/globals';
import { sameSchedule } from './schedule.js';

describe('sameSchedule', () => {
  it('is true for the fields that decide due times alike, whatever else the objects hold', () => {
    expect(
      sameSchedule(
        { scheduleType: 'interval', interval: 30, params: { a: 1 } } as object,
        { scheduleType: 'interval', interval: 30, params: { a: 2 } } as object,
      ),
    ).toBe(true);
    expect(
      sameSchedule(
        { scheduleType: 'cron', cronExpression: '0 9 * * 1' },
        { scheduleType: 'cron', cronExpression: '0 9 * * 1', timezone: 'UTC' },
      ),
    ).toBe(true);
    expect(sameSchedule(undefined, undefined)).toBe(true);
  });

  it('is false when the type, interval, expression, instant or time zone changes, or a schedule comes or goes', () => {
    const base = { scheduleType: 'cron', cronExpression: '0 9 * * 1', timezone: 'Europe/Paris' };
    expect(sameSchedule(base, { ...base, cronExpression: '0 10 * * 1' })).toBe(false);
    expect(sameSchedule(base, { ...base, timezone: 'UTC' })).toBe(false);
    expect(sameSchedule({ scheduleType: 'interval', interval: 30 }, { scheduleType: 'interval', interval: 31 })).toBe(
      false,
    );
    expect(
      sameSchedule(
        { scheduleType: 'once', scheduledAt: '2026-12-01T00:00:00.000Z' },
        { scheduleType: 'once', scheduledAt: '2026-12-02T00:00:00.000Z' },
      ),
    ).toBe(false);
    expect(sameSchedule(base, undefined)).toBe(false);
    expect(sameSchedule(undefined, base)).toBe(false);
  });
});
