import { Injectable, Logger } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';
import { RateLimitStore } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';

/**
 * The workspace's function-executions limit (RATE_LIMIT_EXECUTE_PER_MINUTE) for
 * runs that start without an HTTP request: event-driven, scheduled and
 * api.invokeTrigger. It is the same counter the HTTP `execute` class counts
 * (`ws.<workspace>.execute`), so every path that starts a run shares one budget.
 */
@Injectable()
export class ExecutionBudget {
  private readonly logger = new Logger('ExecutionBudget');

  constructor(
    private readonly store: RateLimitStore,
    private readonly config: ComputeConfig,
  ) {}

  /** Whether one more execution fits now; an unavailable counter allows it, as the HTTP limit does. */
  async take(scope: WorkspaceScope): Promise<boolean> {
    try {
      const { count } = await this.store.hit(`ws.${scope.workspace}.execute`, this.config.RATE_LIMIT_WINDOW_MS);
      return count <= this.config.RATE_LIMIT_EXECUTE_PER_MINUTE;
    } catch (err) {
      this.logger.warn({ msg: 'executions counter unavailable; run allowed', err: String(err) });
      return true;
    }
  }
}
