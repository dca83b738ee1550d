/** The circuit breaker's rules. */
export interface BreakerSettings {
  /** Rolling window over which requests are counted (10 s). */
  readonly windowMs: number;
  /** Fewest requests in the window before the breaker may open (5). */
  readonly minRequests: number;
  /** Share of failed requests in the window that opens it (0.5). */
  readonly failureRatio: number;
  /** Quiet time after the last request to the receiver that closes an open circuit (30 s). */
  readonly resetMs: number;
}

/**
 * The spec's numbers, fixed. The window being shorter than the reset also means a
 * circuit that closes (after 30 s without a request) starts from an empty window:
 * the next failures are counted afresh.
 */
export const SPEC_BREAKER: BreakerSettings = { windowMs: 10_000, minRequests: 5, failureRatio: 0.5, resetMs: 30_000 };

/** Requests actually sent to one receiver within the rolling window. */
export interface WindowTraffic {
  readonly requests: number;
  readonly failures: number;
}

/** Whether the window's traffic opens the circuit: at least 5 requests, at least half failed. */
export function trips(traffic: WindowTraffic, settings: BreakerSettings): boolean {
  return traffic.requests >= settings.minRequests && traffic.failures >= traffic.requests * settings.failureRatio;
}

/** A receiver's circuit as stored: when it opened, and the last request actually sent to it. */
export interface CircuitState {
  readonly openedAt: Date | null;
  readonly lastRequestAt: Date | null;
}

/**
 * Whether attempts to the receiver are rejected now. An open circuit stays open
 * until the receiver has seen no request for `resetMs` (rejected attempts are
 * not requests), then closes; the next failures count afresh.
 */
export function isOpen(state: CircuitState, now: Date, settings: BreakerSettings): boolean {
  if (!state.openedAt) return false;
  const quietSince = Math.max(state.openedAt.getTime(), state.lastRequestAt?.getTime() ?? 0);
  return now.getTime() - quietSince < settings.resetMs;
}

/** The receiver a breaker guards: the URL's origin (scheme, host and port). */
export function receiverOf(url: string): string {
  return new URL(url).origin;
}

/**
 * One breaker: a workspace's traffic to one receiver origin. Tenants sharing a
 * receiver have a breaker each, so one workspace's failures never open (and its
 * open circuit never spends) another's attempts.
 */
export interface BreakerKey {
  readonly workspace: string;
  readonly receiver: string;
}

/** The breaker of a workspace's deliveries to `url`. */
export function breakerOf(workspace: string, url: string): BreakerKey {
  return { workspace, receiver: receiverOf(url) };
}

/** A breaker key as one string, for sets and maps. */
export function breakerId(key: BreakerKey): string {
  return JSON.stringify([key.workspace, key.receiver]);
}
