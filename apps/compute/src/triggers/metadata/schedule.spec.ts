import { describe, expect, it } from '@jest/globals';
import { checkTriggerMetadata, nextScheduledTime, type ScheduledMetadata } from './index.js';

const NOW = new Date('2026-01-01T00:00:00Z');

function scheduled(metadata: Record<string, unknown>): ScheduledMetadata {
  const result = checkTriggerMetadata('scheduled', metadata, NOW);
  if ('errors' in result) throw new Error(JSON.stringify(result.errors));
  return result.metadata;
}

/** The next `n` due times after `from`, each computed from the previous one as the scheduler does. */
function dueTimes(meta: ScheduledMetadata, from: string, n: number): (string | null)[] {
  const out: (string | null)[] = [];
  let after: Date | null = new Date(from);
  for (let i = 0; i < n && after; i++) {
    after = nextScheduledTime(meta, after);
    out.push(after ? after.toISOString() : null);
  }
  return out;
}

const cron = (cronExpression: string, timezone = 'UTC') =>
  scheduled({ scheduleType: 'cron', cronExpression, timezone });

describe('nextScheduledTime', () => {
  describe('interval', () => {
    it('counts from the previous due time, to the millisecond', () => {
      const meta = scheduled({ interval: 90 });
      expect(dueTimes(meta, '2026-01-01T00:00:00.250Z', 3)).toEqual([
        '2026-01-01T00:01:30.250Z',
        '2026-01-01T00:03:00.250Z',
        '2026-01-01T00:04:30.250Z',
      ]);
    });

    it('is elapsed time, blind to daylight saving (one hour apart across the New York gap)', () => {
      const meta = scheduled({ interval: 3600 });
      // 01:00 EST, then 03:00 EDT: one real hour.
      expect(dueTimes(meta, '2026-03-08T06:00:00Z', 2)).toEqual([
        '2026-03-08T07:00:00.000Z',
        '2026-03-08T08:00:00.000Z',
      ]);
    });

    it('reaches the longest interval', () => {
      expect(
        nextScheduledTime(scheduled({ interval: 366 * 86400 }), new Date('2026-01-01T00:00:00Z'))?.toISOString(),
      ).toBe('2027-01-02T00:00:00.000Z');
    });
  });

  describe('once', () => {
    const meta = scheduled({ scheduleType: 'once', scheduledAt: '2026-05-01T10:00:00Z' });

    it.each([
      ['2026-01-01T00:00:00Z', '2026-05-01T10:00:00.000Z'],
      ['2026-05-01T09:59:59.999Z', '2026-05-01T10:00:00.000Z'],
      ['2026-05-01T10:00:00Z', null],
      ['2026-06-01T00:00:00Z', null],
    ])('after %s: %s', (after, expected) => {
      expect(nextScheduledTime(meta, new Date(after))?.toISOString() ?? null).toBe(expected);
    });
  });

  describe('cron', () => {
    it.each([
      ['* * * * *', '2026-01-01T12:00:00Z', ['2026-01-01T12:01:00.000Z', '2026-01-01T12:02:00.000Z']],
      ['* * * * *', '2026-01-01T12:00:00.500Z', ['2026-01-01T12:01:00.000Z', '2026-01-01T12:02:00.000Z']],
      ['0 9 * * 1-5', '2026-01-02T10:00:00Z', ['2026-01-05T09:00:00.000Z', '2026-01-06T09:00:00.000Z']],
      // Sunday is 0.
      ['0 12 * * 0', '2026-01-01T00:00:00Z', ['2026-01-04T12:00:00.000Z', '2026-01-11T12:00:00.000Z']],
      ['0 0 29 2 *', '2026-01-01T00:00:00Z', ['2028-02-29T00:00:00.000Z', '2032-02-29T00:00:00.000Z']],
      // Day-of-month and weekday both restricted: either matches (classic cron); Friday 2 Jan, Tuesday 13 Jan.
      [
        '0 0 13 * 5',
        '2026-01-01T00:00:00Z',
        ['2026-01-02T00:00:00.000Z', '2026-01-09T00:00:00.000Z', '2026-01-13T00:00:00.000Z'],
      ],
      // Only one restricted: only it counts.
      ['0 0 13 * *', '2026-01-01T00:00:00Z', ['2026-01-13T00:00:00.000Z', '2026-02-13T00:00:00.000Z']],
    ])('%s after %s', (expression, after, expected) => {
      expect(dueTimes(cron(expression), after, expected.length)).toEqual(expected);
    });

    it('is strictly after: a due time passed in yields the next one', () => {
      expect(nextScheduledTime(cron('0 * * * *'), new Date('2026-01-01T01:00:00Z'))?.toISOString()).toBe(
        '2026-01-01T02:00:00.000Z',
      );
    });

    it('reads the expression in the trigger timezone', () => {
      expect(dueTimes(cron('0 9 * * *', 'Asia/Kolkata'), '2026-01-01T00:00:00Z', 2)).toEqual([
        '2026-01-01T03:30:00.000Z',
        '2026-01-02T03:30:00.000Z',
      ]);
      // 09:00 local stays 09:00 local across a transition: 08:00Z in winter, 07:00Z in summer.
      expect(dueTimes(cron('0 9 * * *', 'Europe/Berlin'), '2026-03-28T00:00:00Z', 2)).toEqual([
        '2026-03-28T08:00:00.000Z',
        '2026-03-29T07:00:00.000Z',
      ]);
    });
  });

  /**
   * Daylight saving, as croner 11 gives it with fixedTimeRule 'no-wildcard'.
   * Fixed-time expressions (minute and hour without * or a step): a time in the
   * skipped hour fires once at the first instant after the gap (03:00 local, not
   * 03:30); a time in the repeated hour fires once, on its first occurrence.
   * Other expressions skip times in the gap and fire on both occurrences.
   */
  describe('daylight saving', () => {
    describe('America/New_York: 2026-03-08 02:00 EST becomes 03:00 EDT', () => {
      const tz = 'America/New_York';
      it.each([
        ['30 2 * * *', '2026-03-07T12:00:00Z', ['2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z']],
        ['0 2 * * *', '2026-03-07T12:00:00Z', ['2026-03-08T07:00:00.000Z', '2026-03-09T06:00:00.000Z']],
        // Two fixed times in the gap collapse into one run at 03:00.
        ['0,30 2 * * *', '2026-03-07T12:00:00Z', ['2026-03-08T07:00:00.000Z', '2026-03-09T06:00:00.000Z']],
        // Wildcard minute: the gap's times are skipped, the day has no 02:xx run.
        ['*/30 2 * * *', '2026-03-07T12:00:00Z', ['2026-03-09T06:00:00.000Z', '2026-03-09T06:30:00.000Z']],
        // Wildcard hour: 00:30, 01:30, then 03:30 (02:30 does not exist).
        [
          '30 * * * *',
          '2026-03-08T05:00:00Z',
          ['2026-03-08T05:30:00.000Z', '2026-03-08T06:30:00.000Z', '2026-03-08T07:30:00.000Z'],
        ],
      ])('%s after %s', (expression, after, expected) => {
        expect(dueTimes(cron(expression, tz), after, expected.length)).toEqual(expected);
      });
    });

    describe('America/New_York: 2026-11-01 02:00 EDT becomes 01:00 EST', () => {
      const tz = 'America/New_York';
      it.each([
        // 01:30 EDT only; 01:30 EST (06:30Z) does not fire.
        ['30 1 * * *', '2026-10-31T12:00:00Z', ['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']],
        // Chained from the first occurrence, the second is still skipped.
        ['30 1 * * *', '2026-11-01T05:30:00Z', ['2026-11-02T06:30:00.000Z']],
        // Wildcard hour: 01:30 twice, an hour apart.
        [
          '30 * * * *',
          '2026-11-01T04:00:00Z',
          [
            '2026-11-01T04:30:00.000Z',
            '2026-11-01T05:30:00.000Z',
            '2026-11-01T06:30:00.000Z',
            '2026-11-01T07:30:00.000Z',
          ],
        ],
        [
          '*/30 1 * * *',
          '2026-10-31T12:00:00Z',
          [
            '2026-11-01T05:00:00.000Z',
            '2026-11-01T05:30:00.000Z',
            '2026-11-01T06:00:00.000Z',
            '2026-11-01T06:30:00.000Z',
          ],
        ],
      ])('%s after %s', (expression, after, expected) => {
        expect(dueTimes(cron(expression, tz), after, expected.length)).toEqual(expected);
      });
    });

    describe('Europe/Berlin: 2026-03-29 02:00 CET becomes 03:00 CEST', () => {
      const tz = 'Europe/Berlin';
      it.each([
        ['30 2 * * *', '2026-03-28T12:00:00Z', ['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z']],
        // A list of fixed hours is fixed-time too: 02:30 moves to 03:00, 14:30 is unaffected.
        [
          '30 2,14 * * *',
          '2026-03-28T12:00:00Z',
          [
            '2026-03-28T13:30:00.000Z',
            '2026-03-29T01:00:00.000Z',
            '2026-03-29T12:30:00.000Z',
            '2026-03-30T00:30:00.000Z',
          ],
        ],
        // A range: 02:30 moves to 03:00, then 03:30 as usual.
        [
          '30 2-3 * * *',
          '2026-03-28T12:00:00Z',
          ['2026-03-29T01:00:00.000Z', '2026-03-29T01:30:00.000Z', '2026-03-30T00:30:00.000Z'],
        ],
        ['30 * * * *', '2026-03-29T00:00:00Z', ['2026-03-29T00:30:00.000Z', '2026-03-29T01:30:00.000Z']],
      ])('%s after %s', (expression, after, expected) => {
        expect(dueTimes(cron(expression, tz), after, expected.length)).toEqual(expected);
      });
    });

    describe('Europe/Berlin: 2026-10-25 03:00 CEST becomes 02:00 CET', () => {
      const tz = 'Europe/Berlin';
      it.each([
        ['30 2 * * *', '2026-10-24T12:00:00Z', ['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']],
        [
          '30 2,14 * * *',
          '2026-10-24T12:00:00Z',
          [
            '2026-10-24T12:30:00.000Z',
            '2026-10-25T00:30:00.000Z',
            '2026-10-25T13:30:00.000Z',
            '2026-10-26T01:30:00.000Z',
          ],
        ],
        [
          '30 * * * *',
          '2026-10-24T23:00:00Z',
          [
            '2026-10-24T23:30:00.000Z',
            '2026-10-25T00:30:00.000Z',
            '2026-10-25T01:30:00.000Z',
            '2026-10-25T02:30:00.000Z',
          ],
        ],
      ])('%s after %s', (expression, after, expected) => {
        expect(dueTimes(cron(expression, tz), after, expected.length)).toEqual(expected);
      });
    });
  });

  it('refuses an invalid after', () => {
    expect(() => nextScheduledTime(scheduled({ interval: 5 }), new Date(Number.NaN))).toThrow(RangeError);
  });
});
