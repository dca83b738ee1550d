import { Injectable, Logger, Optional } from '@nestjs/common';
import type { Tx, WorkspaceScope } from '@strata/db';
import { Clock, RateLimitStore } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { MonthlyExecutions } from '../usage/monthly-executions.js';

/** Executions a replica takes from the shared counter at once: a fiftieth of the limit, 1 to 20. */
export function reservationSize(limit: number): number {
  return Math.min(20, Math.max(1, Math.floor(limit / 50)));
}

/** What a replica holds of one workspace's window. */
interface Reserved {
  readonly window: number;
  /** Executions taken from the shared counter and not yet handed out. */
  left: number;
  /** The counter had no more to give in this window. */
  exhausted: boolean;
  /** A reservation on its way. */
  pending: Promise<void> | undefined;
}

/** Workspaces whose reservations a replica keeps at once (oldest out first). */
const MAX_RESERVED = 10_000;

/**
 * The workspace's function-executions limit (RATE_LIMIT_EXECUTE_PER_MINUTE) for
 * runs that start without an HTTP request: event-driven, scheduled, endpoint
 * calls and api.invokeTrigger. It is the same counter the HTTP `execute` class
 * counts (`ws.<workspace>.execute`), so every path that starts a run shares one
 * budget.
 *
 * A replica takes executions from the shared counter a few at a time
 * ({@link reservationSize}) and hands them out without a round trip until they
 * are used, so most runs do not wait for NATS. The counter is given no more than
 * the limit leaves, so one replica alone is exact; with several, executions one
 * replica reserved and did not use count until the window ends (at most the
 * reservation size less one per replica and window: the limit errs on the
 * strict side). Once the counter has nothing left for the window, the replica
 * refuses without asking again until the next window.
 */
@Injectable()
export class ExecutionBudget {
  private readonly logger = new Logger('ExecutionBudget');
  private readonly reserved = new Map<string, Reserved>();

  constructor(
    private readonly store: RateLimitStore,
    private readonly config: ComputeConfig,
    private readonly clock: Clock,
    /** The plan's executions this month (docs/plans.md); absent only where the per-minute counter is tested alone. */
    @Optional() private readonly monthly?: MonthlyExecutions,
  ) {}

  /**
   * Whether one more execution fits now: the plan's executions this month
   * first, then the per-minute limit; an unavailable per-minute counter allows
   * it, as the HTTP limit does. `tx`: the transaction the run will be
   * recorded in, if one is open (the month's count is read in it).
   */
  async take(scope: WorkspaceScope, tx?: Tx): Promise<boolean> {
    if (this.monthly && (await this.monthly.refusal(scope, tx))) return false;
    const workspace = scope.workspace;
    for (;;) {
      const window = Math.floor(this.clock.now().getTime() / this.config.RATE_LIMIT_WINDOW_MS);
      const held = this.held(workspace, window);
      if (held.left > 0) {
        held.left--;
        return true;
      }
      if (held.exhausted) return false;
      held.pending ??= this.reserve(workspace, held);
      try {
        await held.pending;
      } catch (err) {
        this.logger.warn({ msg: 'executions counter unavailable; run allowed', err: String(err) });
        return true;
      }
    }
  }

  private held(workspace: string, window: number): Reserved {
    const held = this.reserved.get(workspace);
    if (held && held.window === window) return held;
    const fresh: Reserved = { window, left: 0, exhausted: false, pending: undefined };
    this.reserved.delete(workspace);
    if (this.reserved.size >= MAX_RESERVED) this.reserved.delete(this.reserved.keys().next().value!);
    this.reserved.set(workspace, fresh);
    return fresh;
  }

  /** Takes up to a reservation's worth from the shared counter: what the limit still leaves. */
  private async reserve(workspace: string, held: Reserved): Promise<void> {
    const limit = this.config.RATE_LIMIT_EXECUTE_PER_MINUTE;
    const size = reservationSize(limit);
    try {
      const { count } = await this.store.hit(`ws.${workspace}.execute`, this.config.RATE_LIMIT_WINDOW_MS, size);
      const granted = Math.max(0, Math.min(size, limit - (count - size)));
      held.left += granted;
      if (granted < size) held.exhausted = true;
    } finally {
      held.pending = undefined;
    }
  }
}
