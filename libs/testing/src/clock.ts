/**
 * A clock that stands still until the test moves it. Give it to a service where
 * it takes a `Clock` (`startStack`'s `clocks`, or a constructor) and `advance` it
 * past a due time, a window or a grace period instead of waiting for real time:
 * what happens then depends on the steps of the test, not on how busy the
 * machine is. Structurally a `Clock` of @strata/platform (`now(): Date`).
 */
export class ManualClock {
  private ms: number;

  /** Starts at `start` (now by default) and stays there. */
  constructor(start: Date | number = Date.now()) {
    this.ms = typeof start === 'number' ? start : start.getTime();
  }

  now(): Date {
    return new Date(this.ms);
  }

  /** Moves time on by `ms` (never back) and answers the new now. */
  advance(ms: number): Date {
    if (!Number.isFinite(ms) || ms < 0) throw new Error(`a clock only moves forward (advance by ${ms} ms)`);
    this.ms += ms;
    return this.now();
  }
}
