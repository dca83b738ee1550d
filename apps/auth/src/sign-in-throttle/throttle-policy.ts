/**
 * How failed sign-ins slow the next attempt down: a subject (an account, or a
 * client address) may fail `freeFailures` times; from then on each attempt
 * waits `baseDelayMs`, doubling with every further failure, up to `maxDelayMs`.
 * Failures are forgotten `memoryMs` after the wait of the last one ended.
 * Pure: the caller passes the time in.
 */
export interface ThrottlePolicy {
  readonly freeFailures: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly memoryMs: number;
}

/** What is remembered of a subject: its failures, and when the last was counted (epoch ms). */
export interface FailureRecord {
  readonly failures: number;
  readonly lastFailureAt: number;
}

/** The wait after `failures` failures: none below the free ones, then doubling, capped. */
export function delayAfter(failures: number, policy: ThrottlePolicy): number {
  if (failures < policy.freeFailures) return 0;
  // 2^40 times any base is far past any cap: stop there rather than overflow to Infinity.
  const doublings = Math.min(failures - policy.freeFailures, 40);
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** doublings);
}

/** The record as it stands at `now`: undefined once its failures are forgotten. */
export function standing(
  record: FailureRecord | undefined,
  now: number,
  policy: ThrottlePolicy,
): FailureRecord | undefined {
  if (!record || record.failures <= 0) return undefined;
  const forgetAt = record.lastFailureAt + delayAfter(record.failures, policy) + policy.memoryMs;
  return now >= forgetAt ? undefined : record;
}

/** When the subject may try again, if it must wait at `now` (epoch ms); undefined when it may try now. */
export function waitUntil(record: FailureRecord | undefined, now: number, policy: ThrottlePolicy): number | undefined {
  const current = standing(record, now, policy);
  if (!current) return undefined;
  // Within the free failures nobody waits: a failure another sign-in counted a moment after this
  // one read its clock (concurrent sign-ins of one account) lies "ahead" of `now`, not a wait.
  const delay = delayAfter(current.failures, policy);
  if (delay === 0) return undefined;
  const until = current.lastFailureAt + delay;
  return until > now ? until : undefined;
}

/** The record once one more failure is counted at `now`. */
export function withFailure(record: FailureRecord | undefined, now: number, policy: ThrottlePolicy): FailureRecord {
  const current = standing(record, now, policy);
  return { failures: (current?.failures ?? 0) + 1, lastFailureAt: now };
}

/**
 * The record once a failure counted in advance (at `chargedAt`, over `before`) turns out
 * not to be one: one failure fewer, and the time of the last failure put back when no
 * other failure was counted since.
 */
export function withoutFailure(
  record: FailureRecord | undefined,
  charge: { readonly before: FailureRecord | undefined; readonly chargedAt: number },
): FailureRecord | undefined {
  if (!record || record.failures <= 1) return undefined;
  const lastFailureAt =
    record.lastFailureAt === charge.chargedAt && charge.before ? charge.before.lastFailureAt : record.lastFailureAt;
  return { failures: record.failures - 1, lastFailureAt };
}

/** `Retry-After` in whole seconds (at least 1) for a wait until `until`. */
export function retryAfterSeconds(until: number, now: number): number {
  return Math.max(1, Math.ceil((until - now) / 1000));
}
