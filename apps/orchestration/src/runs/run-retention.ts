import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Clock, PeriodicTask } from '@strata/platform';
import { OrchestrationConfig } from '../orchestration.config.js';
import { RunsRepository } from './runs.repository.js';

/**
 * Deletes finished runs (and their steps) once their `ttlExpiresAt` has passed,
 * in batches, every minute on every replica with the engine (each batch is one
 * statement: replicas overlapping delete nothing twice).
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
    return deleted;
  }
}
