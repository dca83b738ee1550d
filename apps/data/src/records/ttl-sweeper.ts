import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Collection } from '@strata/contracts';
import { issueWorkspaceScope, Transactions, type Tx } from '@strata/db';
import { Clock, PeriodicTask, StrataException } from '@strata/platform';
import { CollectionsRepository } from '../collections/collections.repository.js';
import { DataConfig } from '../data.config.js';
import { OutboxRelay } from '../events/outbox-relay.js';
import { RecordWriter } from './record-writer.js';
import { RecordsRepository } from './records.repository.js';
import type { RecordRow } from './record.types.js';

/** The actor of expiries, in events (`deletedBy`) and the changelog. */
export const TTL_ACTOR = 'system:ttl';

/**
 * Deletes expired records (soft, so `restore` can bring one back) and emits
 * `record_expired` for each. Any number of replicas may sweep: rows are claimed
 * with FOR UPDATE SKIP LOCKED. A record whose deletion a `restrict` reference
 * blocks is kept and retried an hour later. Expiry is judged by the service's
 * `Clock` (the one that computed `ttlSeconds` into `expiresAt`); the sweep's
 * pace is real time.
 */
@Injectable()
export class TtlSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('TtlSweeper');
  private readonly task: PeriodicTask;

  constructor(
    private readonly transactions: Transactions,
    private readonly records: RecordsRepository,
    private readonly collections: CollectionsRepository,
    private readonly writer: RecordWriter,
    private readonly relay: OutboxRelay,
    private readonly config: DataConfig,
    private readonly clock: Clock,
  ) {
    this.task = new PeriodicTask('TTL sweep', config.DATA_TTL_SWEEP_INTERVAL_MS, async () => {
      if ((await this.sweep()) > 0) this.relay.wake();
    });
  }

  onApplicationBootstrap(): void {
    if (this.config.DATA_TTL_SWEEP_ENABLED) this.task.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.task.stop();
  }

  /** Expires one batch of due records; returns how many expired. */
  async sweep(): Promise<number> {
    const now = this.clock.now();
    return this.transactions.run(async (tx) => {
      const rows = await this.records.claimExpired(tx, 100, now);
      const collections = new Map<string, Collection>();
      let expired = 0;
      for (const row of rows) if (await this.expire(tx, row, collections, now)) expired++;
      return expired;
    });
  }

  /**
   * Expires one claimed record within its own workspace: the scope is issued
   * from the row the sweep claimed (a trusted source, not a request).
   */
  private async expire(tx: Tx, row: RecordRow, collections: Map<string, Collection>, now: Date): Promise<boolean> {
    const scope = issueWorkspaceScope(row.workspace_slug);
    try {
      await this.transactions.savepoint(tx, async () => {
        const c =
          collections.get(row.collection_id) ?? (await this.collections.find(scope, { id: row.collection_id }, { tx }));
        collections.set(c.id, c);
        await this.writer.delete(scope, tx, c, row, TTL_ACTOR, {
          permanent: false,
          emit: true,
          event: 'record_expired',
        });
      });
      return true;
    } catch (err) {
      if (!(err instanceof StrataException)) throw err;
      await this.records.postponeExpiry(scope, tx, row.id, now);
      this.logger.warn({ msg: 'expired record kept; retrying in an hour', recordId: row.id, reason: err.message });
      return false;
    }
  }
}
