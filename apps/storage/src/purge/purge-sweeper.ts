import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Clock, PeriodicTask } from '@strata/platform';
import { StorageDriver } from '../drivers/storage-driver.js';
import { StorageConfig } from '../storage.config.js';
import { PurgesRepository } from './purges.repository.js';

const BATCH = 100;
/** Longest wait before a failed purge is tried again. */
const MAX_BACKOFF_MS = 3_600_000;

/**
 * Removes the bytes of deleted files and of uploads that never wrote their row
 * (every STORAGE_PURGE_INTERVAL_MS on replicas with STORAGE_PURGER_ENABLED, and right
 * after a delete). Replicas share the rows (SKIP LOCKED); a failed purge is retried
 * with a doubling delay, its attempts and last error kept on its row.
 */
@Injectable()
export class PurgeSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('PurgeSweeper');
  private readonly task: PeriodicTask;

  constructor(
    private readonly purges: PurgesRepository,
    private readonly driver: StorageDriver,
    private readonly clock: Clock,
    private readonly config: StorageConfig,
  ) {
    this.task = new PeriodicTask('PurgeSweeper', config.STORAGE_PURGE_INTERVAL_MS, () => this.sweep(), this.logger);
  }

  onApplicationBootstrap(): void {
    if (this.config.STORAGE_PURGER_ENABLED) this.task.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  wake(): void {
    this.task.wake();
  }

  /** One pass over the purges due now. */
  async sweep(): Promise<{ purged: number; failed: number }> {
    const now = this.clock.now();
    const done = await this.purges.processDue(
      now,
      BATCH,
      (key) => this.driver.delete(key),
      (attempts) => new Date(now.getTime() + Math.min(MAX_BACKOFF_MS, 1000 * 2 ** attempts)),
    );
    if (done.purged || done.failed) this.logger.log({ msg: 'purge sweep', ...done });
    return done;
  }
}
