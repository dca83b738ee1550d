/** Attempts per delivery (the spec's five). */
export const MAX_ATTEMPTS = 5;

/** Extra time over the attempt timeout before a claimed attempt counts as lost. */
const LEASE_MARGIN_MS = 5000;

/** What happens to a delivery after an attempt that did not succeed. */
export type AfterFailure = { readonly status: 'retrying'; readonly delayMs: number } | { readonly status: 'failed' };

/**
 * The retry schedule: delays before attempts 2 to 5 (30 s, 2 min, 10 min, 30 min by
 * default) and the lease of a claimed attempt. Pure; the dispatcher applies it in SQL.
 */
export class RetrySchedule {
  constructor(
    /** Delay before attempt n + 2 after attempt n + 1 failed, for n in 0..3. */
    readonly delaysMs: readonly number[],
    readonly attemptTimeoutMs: number,
  ) {
    if (delaysMs.length !== MAX_ATTEMPTS - 1 || delaysMs.some((d) => !Number.isInteger(d) || d < 0))
      throw new Error(`a retry schedule needs ${MAX_ATTEMPTS - 1} delays in milliseconds`);
  }

  /** From the `WEBHOOKS_RETRY_DELAYS_MS` form: `30000,120000,600000,1800000`. */
  static parse(delays: string, attemptTimeoutMs: number): RetrySchedule {
    return new RetrySchedule(
      delays.split(',').map((d) => Number(d.trim())),
      attemptTimeoutMs,
    );
  }

  /** After attempt `attempt` (1-based) failed: the next attempt's delay, or `failed` after the last. */
  afterFailure(attempt: number): AfterFailure {
    if (attempt >= MAX_ATTEMPTS) return { status: 'failed' };
    return { status: 'retrying', delayMs: this.delaysMs[Math.max(attempt, 1) - 1]! };
  }

  /**
   * How long a claim on attempt `attempt` holds the delivery: when no outcome has
   * been recorded by then (the replica died mid-attempt), the attempt counts as
   * failed and the next one is due. That is the schedule's own next due time,
   * but never before the attempt could have timed out, so no replica claims a
   * delivery whose attempt is still in flight.
   */
  leaseMs(attempt: number): number {
    const next = this.afterFailure(attempt);
    const floor = this.attemptTimeoutMs + LEASE_MARGIN_MS;
    return next.status === 'retrying' ? Math.max(next.delayMs, floor) : floor;
  }

  /** Leases of attempts 1..5, indexed from 1 (for the claim statement). */
  leases(): number[] {
    return Array.from({ length: MAX_ATTEMPTS }, (_, i) => this.leaseMs(i + 1));
  }
}
