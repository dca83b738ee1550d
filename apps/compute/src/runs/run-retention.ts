import { Injectable } from '@nestjs/common';
import { RECORD_EVENTS_MAX_AGE_MS } from '@strata/contracts';
import { Clock, RetentionSweep, type RetentionRule } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { EventRunsRepository } from '../events/event-runs.repository.js';
import { RunRetentionRepository } from './run-retention.repository.js';

const DAY_MS = 24 * 3_600_000;
/** (event, trigger) pairs are kept this long past the records stream's own age, for clocks that disagree. */
const EVENT_PAIR_MARGIN_MS = DAY_MS;

/**
 * The compute service's retention (docs/compute.md, "Retention"), every
 * COMPUTE_RETENTION_SWEEP_INTERVAL_MS on each API replica with
 * COMPUTE_RETENTION_SWEEP_ENABLED:
 * - runs that ended more than COMPUTE_RUN_RETENTION_DAYS ago, with their logs, results
 *   and documents;
 * - the (record event, trigger) pairs that made event-driven runs at most once, a day past
 *   the records stream's age (RECORD_EVENTS_MAX_AGE_MS: 7 days): the stream cannot
 *   deliver their event again. Not a setting: a shorter window would let a redelivered
 *   event run a trigger twice. (The (arrival, trigger) pairs written until 2026-11-24 go
 *   the same way.)
 */
@Injectable()
export class RunRetention extends RetentionSweep {
  constructor(
    private readonly runs: RunRetentionRepository,
    private readonly eventRuns: EventRunsRepository,
    private readonly config: ComputeConfig,
    clock: Clock,
  ) {
    super('compute retention', clock, {
      enabled: config.COMPUTE_RETENTION_SWEEP_ENABLED,
      intervalMs: config.COMPUTE_RETENTION_SWEEP_INTERVAL_MS,
    });
  }

  protected rules(now: Date): readonly RetentionRule[] {
    const runsBefore = new Date(now.getTime() - this.config.COMPUTE_RUN_RETENTION_DAYS * DAY_MS);
    const pairsBefore = new Date(now.getTime() - RECORD_EVENTS_MAX_AGE_MS - EVENT_PAIR_MARGIN_MS);
    return [
      {
        table: 'compute.runs',
        // A run's row holds its logs and result (up to megabytes), and takes its documents with it.
        batchSize: 200,
        deleteBatch: (limit) => this.runs.deleteFinished(runsBefore, limit),
      },
      {
        table: 'compute.trigger_event_runs',
        deleteBatch: (limit) => this.eventRuns.forgetBefore(pairsBefore, limit),
      },
    ];
  }
}
