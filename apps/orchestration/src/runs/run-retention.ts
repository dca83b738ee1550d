import { Injectable } from '@nestjs/common';
import { RECORD_EVENTS_MAX_AGE_MS } from '@strata/contracts';
import { Clock, RetentionSweep, type RetentionRule } from '@strata/platform';
import { OrchestrationConfig } from '../orchestration.config.js';
import { RunsRepository } from './runs.repository.js';

/** Record events' keys are kept this long past the stream's own retention, for clocks that disagree. */
const EVENT_KEY_MARGIN_MS = 24 * 3_600_000;

/**
 * Deletes finished runs (and their steps, and the key of the webhook delivery that started
 * each) once their `ttlExpiresAt` has passed (ORCHESTRATION_RUN_RETENTION_DAYS after they
 * ended), the keys of record events the stream can no longer deliver again, and plain HMAC
 * signatures' claims past their window, every minute on every replica with the engine. On
 * the shared RetentionSweep: batches picked `FOR UPDATE SKIP LOCKED`, so replicas
 * overlapping share the rows and never wait.
 */
@Injectable()
export class RunRetention extends RetentionSweep {
  constructor(
    private readonly runs: RunsRepository,
    clock: Clock,
    config: OrchestrationConfig,
  ) {
    super('orchestration retention', clock, { enabled: config.ORCHESTRATION_ENGINE_ENABLED, intervalMs: 60_000 });
  }

  protected rules(now: Date): readonly RetentionRule[] {
    const keysBefore = new Date(now.getTime() - RECORD_EVENTS_MAX_AGE_MS - EVENT_KEY_MARGIN_MS);
    return [
      {
        table: 'orchestration.runs',
        // A run takes its steps with it.
        batchSize: 500,
        deleteBatch: (limit) => this.runs.deleteExpired(now, limit),
      },
      {
        table: 'orchestration.event_runs',
        deleteBatch: (limit) => this.runs.deleteStaleEventKeys(keysBefore, limit),
      },
      {
        // The same table's plain HMAC signature claims, by their own end.
        table: 'orchestration.event_runs (signature claims)',
        deleteBatch: (limit) => this.runs.deleteExpiredClaims(now, limit),
      },
    ];
  }
}
