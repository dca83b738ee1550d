import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { RECORD_EVENTS_MAX_AGE_MS } from '@strata/contracts';
import { Clock, PeriodicTask } from '@strata/platform';
import { OrchestrationConfig } from '../orchestration.config.js';
import { RunsRepository } from './runs.repository.js';

/** Record events' keys are kept this long past the stream's own retention, for clocks that disagree. */
const EVENT_KEY_MARGIN_MS = 24 * 3_600_000;

/**
 * Deletes finished runs (and their steps) once their `ttlExpiresAt` has passed,
 * the keys of record events the stream can no longer deliver again, and plain HMAC
 * signatures' claims past their window, in batches, every minute on every replica
 * with the engine (each batch is one statement: replicas overlapping delete nothing
 * twice).
 */
@Injectable()
export class RunRetention implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('RunRetention');
  private readonly task: PeriodicTask;

  constructor(
    private readonly runs: RunsRepository,
    private readonly clock: Clock,
    private readonly config: OrchestrationConfig,
  ) {
    this.task = new PeriodicTask('RunRetention', 60_000, () => this.sweep(), this.logger);
  }

  onApplicationBootstrap(): void {
    if (this.config.ORCHESTRATION_ENGINE_ENABLED) this.task.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  /** One pass; how many runs went. */
  async sweep(): Promise<number> {
    let deleted = 0;
    for (;;) {
      const n = await this.runs.deleteExpired(this.clock.now(), 1000);
      deleted += n;
      if (n < 1000) break;
    }
    if (deleted > 0) this.logger.log({ msg: 'expired runs deleted', deleted });
    const before = new Date(this.clock.now().getTime() - RECORD_EVENTS_MAX_AGE_MS - EVENT_KEY_MARGIN_MS);
    let keys = 0;
    for (;;) {
      const n = await this.runs.deleteStaleEventKeys(before, 1000);
      keys += n;
      if (n < 1000) break;
    }
    if (keys > 0) this.logger.log({ msg: 'keys of record events past the stream deleted', keys });
    let claims = 0;
    for (;;) {
      const n = await this.runs.deleteExpiredClaims(this.clock.now(), 1000);
      claims += n;
      if (n < 1000) break;
    }
    if (claims > 0) this.logger.log({ msg: 'webhook signature claims past their window deleted', claims });
    return deleted;
  }
}
