import type { Clock } from '@strata/platform';

/** How many endpoint calls may wait, and for how long (docs/compute.md, "When every isolate is busy"). */
export interface EndpointWaitLimits {
  /** Calls waiting on one worker at once, every workspace together. */
  readonly total: number;
  /** Calls of one workspace waiting on one worker at once. */
  readonly perWorkspace: number;
  /** How long a call may wait for an isolate before it is refused (503). */
  readonly waitMs: number;
}

/** One call waiting for an isolate. */
export interface EndpointWaiter<T> {
  readonly workspace: string;
  /** Past it (the injected clock's milliseconds) the call is refused instead of run. */
  readonly deadline: number;
  readonly value: T;
}

/**
 * The endpoint calls a worker took while every isolate it may give them was
 * busy, waiting for one: bounded (in all and per workspace) and in time, and
 * served round-robin across workspaces, so one workspace's burst never makes
 * another's call wait behind all of it. Pure bookkeeping: whoever holds it
 * arms the timers and hands out the isolates.
 */
export class EndpointWaitQueue<T> {
  /**
   * Each workspace's waiting calls, first come first; a workspace is here while
   * it has one, in the order workspaces are served: the one just served goes to
   * the back (the Map's insertion order is the rotation).
   */
  private readonly byWorkspace = new Map<string, EndpointWaiter<T>[]>();
  private count = 0;

  constructor(
    private readonly limits: EndpointWaitLimits,
    private readonly clock: Clock,
  ) {}

  get size(): number {
    return this.count;
  }

  sizeOf(workspace: string): number {
    return this.byWorkspace.get(workspace)?.length ?? 0;
  }

  /** Queues a call of `workspace`; undefined (nothing queued) past either limit. */
  add(workspace: string, value: T): EndpointWaiter<T> | undefined {
    if (this.limits.waitMs <= 0 || this.count >= this.limits.total) return undefined;
    const waiting = this.byWorkspace.get(workspace);
    if ((waiting?.length ?? 0) >= this.limits.perWorkspace) return undefined;
    const waiter = { workspace, deadline: this.clock.now().getTime() + this.limits.waitMs, value };
    if (waiting) waiting.push(waiter);
    else this.byWorkspace.set(workspace, [waiter]);
    this.count++;
    return waiter;
  }

  /** Takes `waiter` out (its caller went away, or it was answered); whether it was still waiting. */
  remove(waiter: EndpointWaiter<T>): boolean {
    const waiting = this.byWorkspace.get(waiter.workspace);
    const at = waiting?.indexOf(waiter) ?? -1;
    if (!waiting || at < 0) return false;
    waiting.splice(at, 1);
    if (waiting.length === 0) this.byWorkspace.delete(waiter.workspace);
    this.count--;
    return true;
  }

  /** Takes out and answers the calls whose wait is over (the clock is at or past their deadline). */
  expired(): EndpointWaiter<T>[] {
    const now = this.clock.now().getTime();
    const over: EndpointWaiter<T>[] = [];
    for (const [workspace, waiting] of this.byWorkspace) {
      // Each workspace's calls are in the order they came, so their deadlines are too.
      let n = 0;
      while (n < waiting.length && waiting[n]!.deadline <= now) n++;
      if (n === 0) continue;
      over.push(...waiting.splice(0, n));
      if (waiting.length === 0) this.byWorkspace.delete(workspace);
    }
    this.count -= over.length;
    return over;
  }

  /** The earliest deadline of a waiting call, if any waits. */
  nextDeadline(): number | undefined {
    let earliest: number | undefined;
    for (const waiting of this.byWorkspace.values()) {
      const first = waiting[0]!.deadline;
      if (earliest === undefined || first < earliest) earliest = first;
    }
    return earliest;
  }

  /**
   * The next call to run, taken out: the oldest call of the first workspace in
   * the rotation that `canTake` lets start now (a workspace at its share of
   * isolates waits, and the next one is served); that workspace then goes to
   * the back of the rotation. Undefined when none can start.
   */
  next(canTake: (workspace: string) => boolean): EndpointWaiter<T> | undefined {
    for (const [workspace, waiting] of this.byWorkspace) {
      if (!canTake(workspace)) continue;
      const waiter = waiting.shift()!;
      this.byWorkspace.delete(workspace);
      if (waiting.length > 0) this.byWorkspace.set(workspace, waiting);
      this.count--;
      return waiter;
    }
    return undefined;
  }
}
