import { Injectable } from '@nestjs/common';
import { Clock, RetentionSweep, type RetentionRule } from '@strata/platform';
import { DataConfig } from '../data.config.js';
import { CHANGELOG_START, RecordRetentionRepository, type ChangelogCursor } from './record-retention.repository.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The records' retention beside the collections' own policies (RetentionSweeper; docs/data.md,
 * "Retention"), every DATA_RETENTION_SWEEP_INTERVAL_MS on each replica with
 * DATA_RETENTION_SWEEP_ENABLED:
 * - Idempotency-Keys older than DATA_IDEMPOTENCY_WINDOW_HOURS (a repeat after it runs anew anyway);
 * - changelog entries older than DATA_CHANGELOG_RETENTION_DAYS of live records in collections
 *   whose `retentionPolicy` sets no `maxAgeDays`;
 * - records deleted (DELETE, TTL) more than DATA_DELETED_RECORD_RETENTION_DAYS ago: no longer
 *   restorable, removed for good with their versions and changelog.
 */
@Injectable()
export class RecordRetention extends RetentionSweep {
  constructor(
    private readonly retention: RecordRetentionRepository,
    private readonly config: DataConfig,
    clock: Clock,
  ) {
    super('data retention', clock, {
      enabled: config.DATA_RETENTION_SWEEP_ENABLED,
      intervalMs: config.DATA_RETENTION_SWEEP_INTERVAL_MS,
    });
  }

  protected rules(now: Date): readonly RetentionRule[] {
    const at = (ms: number) => new Date(now.getTime() - ms);
    const keysBefore = at(this.config.DATA_IDEMPOTENCY_WINDOW_HOURS * HOUR_MS);
    const changelogBefore = at(this.config.DATA_CHANGELOG_RETENTION_DAYS * DAY_MS);
    const deletedBefore = at(this.config.DATA_DELETED_RECORD_RETENTION_DAYS * DAY_MS);
    // The changelog walk of this pass: the entries it keeps are read once, not again by every batch.
    let cursor: ChangelogCursor | undefined = CHANGELOG_START;
    return [
      {
        table: 'data.idempotency_keys',
        deleteBatch: (limit) => this.retention.deleteIdempotencyKeys(keysBefore, limit),
      },
      {
        table: 'data.record_changelog',
        deleteBatch: async (limit) => {
          if (!cursor) return 0;
          const page = await this.retention.deleteChangelogPage(changelogBefore, cursor, limit);
          cursor = page.last;
          return { deleted: page.deleted, more: page.read === limit };
        },
      },
      {
        table: 'data.records',
        // A record takes its versions and changelog with it.
        batchSize: 100,
        deleteBatch: (limit) => this.retention.purgeDeleted(deletedBefore, limit),
      },
    ];
  }
}
