import { Injectable } from '@nestjs/common';
import { metrics } from '@opentelemetry/api';
import { wasCancelled, type RunRow } from './run-rows.js';

/** How a run ended, for the metrics: a cancelled run is `failed` in the API, counted apart here. */
export type RunOutcome = 'completed' | 'failed' | 'cancelled';

/**
 * Counts runs as they end (docs/runbooks.md, "Metrics"): told by the runs
 * repository after the commit of the statement that ended a run, on either
 * engine, so a rolled-back ending is never counted and a run retried and
 * ended again counts again. No attribute names a workspace or an orchestration.
 */
@Injectable()
export class RunEndings {
  private readonly ended = metrics.getMeter('strata-orchestration').createCounter('strata.orchestration.runs.ended', {
    description: 'Runs ended, by outcome (completed, failed, cancelled) and trigger type',
  });

  /** `run` as it was written when it ended. */
  counted(run: Pick<RunRow, 'status' | 'failure_reason' | 'trigger_type'>): void {
    const outcome: RunOutcome =
      run.status === 'completed' ? 'completed' : wasCancelled(run.failure_reason) ? 'cancelled' : 'failed';
    this.ended.add(1, { outcome, trigger_type: run.trigger_type });
  }
}
