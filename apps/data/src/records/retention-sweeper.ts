import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { issueWorkspaceScope, Transactions } from '@strata/db';
import { Clock, PeriodicTask } from '@strata/platform';
import { DataConfig } from '../data.config.js';
import { RecordHistoryRepository, type RetentionTarget } from './record-history.repository.js';

/** Versions deleted per collection and statement; a collection with more goes on in the next statement. */
const BATCH = 1000;
/** Statements per collection and pass: a pass stays short; what is left waits for the next. */
const BATCHES_PER_PASS = 10;
const DAY_MS = 86_400_000;

/**
 * Prunes record versions and changelog by their collection's `retentionPolicy`
 * (`{maxVersions?, maxAgeDays?}`): stored versions beyond the newest `maxVersions`, and
 * versions updated more than `maxAgeDays` ago, go; a record's current version always stays;
 * changelog entries older than `maxAgeDays` go too (without it the platform's
 * DATA_CHANGELOG_RETENTION_DAYS applies: RecordRetention). Any number of replicas may sweep:
 * a collection is pruned by one at a time (a transaction-scoped advisory lock). Age is judged
 * by the service's `Clock`; the pace is real time.
 */
@Injectable()
export class RetentionSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('RetentionSweeper');
  private readonly task: PeriodicTask;

  constructor(
    private readonly transactions: Transactions,
    private readonly history: RecordHistoryRepository,
    private readonly config: DataConfig,
    private readonly clock: Clock,
  ) {
    this.task = new PeriodicTask('retention sweep', config.DATA_RETENTION_SWEEP_INTERVAL_MS, async () => {
      await this.sweep();
    });
  }

  onApplicationBootstrap(): void {
    if (this.config.DATA_RETENTION_SWEEP_ENABLED) this.task.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.task.stop();
  }

  /** One pass over every collection with a policy; returns how many versions and changelog entries went. */
  async sweep(): Promise<{ versions: number; changelog: number }> {
    const now = this.clock.now().getTime();
    const pruned = { versions: 0, changelog: 0 };
    for (const target of await this.history.retentionTargets()) {
      const { versions, changelog } = await this.prune(target, now);
      pruned.versions += versions;
      pruned.changelog += changelog;
    }
    if (pruned.versions > 0 || pruned.changelog > 0) {
      this.logger.log({ msg: 'record versions and changelog pruned by retention policies', ...pruned });
    }
    return pruned;
  }

  /** Within the collection's own workspace: the scope is issued from the collection row the sweep read. */
  private async prune(target: RetentionTarget, now: number): Promise<{ versions: number; changelog: number }> {
    const scope = issueWorkspaceScope(target.workspace_slug);
    const { maxVersions, maxAgeDays } = target.retention_policy;
    const policy = {
      maxVersions: typeof maxVersions === 'number' ? maxVersions : null,
      olderThan: typeof maxAgeDays === 'number' ? new Date(now - maxAgeDays * DAY_MS) : null,
    };
    const pruned = { versions: 0, changelog: 0 };
    if (policy.maxVersions === null && policy.olderThan === null) return pruned;
    // One replica at a time per collection; the others pass it by.
    return this.transactions.run(async (tx) => {
      if (!(await this.history.lockRetention(tx, target.collection_id))) return pruned;
      for (let i = 0; i < BATCHES_PER_PASS; i++) {
        const deleted = await this.history.pruneVersions(scope, tx, target.collection_id, policy, BATCH);
        pruned.versions += deleted;
        if (deleted < BATCH) break;
      }
      const olderThan = policy.olderThan;
      for (let i = 0; olderThan && i < BATCHES_PER_PASS; i++) {
        const deleted = await this.history.pruneChangelog(scope, tx, target.collection_id, olderThan, BATCH);
        pruned.changelog += deleted;
        if (deleted < BATCH) break;
      }
      return pruned;
    });
  }
}
