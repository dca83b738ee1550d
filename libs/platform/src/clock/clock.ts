/**
 * The time that time-dependent logic reads: due times, leases, rolling windows,
 * quiet times, grace periods, expiries, rate-limit windows. It is injected (a
 * service gets it from `PlatformModule.forRoot({ clock })`, `systemClock` unless
 * given) so tests can hold time still and move it on instead of racing it.
 * Timers that bound real I/O (a request's deadline) are not read from it.
 *
 * An abstract class so Nest can use it as the injection token.
 */
export abstract class Clock {
  /** The current instant. */
  abstract now(): Date;
}

/** The process's own clock. */
class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}

export const systemClock: Clock = new SystemClock();
