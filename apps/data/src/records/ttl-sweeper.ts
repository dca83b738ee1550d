import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { Collection } from '@strata/contracts';
import { Clock, PeriodicTask, StrataException } from '@strata/platform';
import { DataConfig } from '../data.config.js';
import { OutboxRelay } from '../events/outbox-relay.js';
import { findCollection } from './collection-lookup.js';
import { RecordWriter } from './record-writer.js';
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
    @InjectDataSource() private readonly db: DataSource,
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
    return this.db.transaction(async (tx) => {
      const rows = await tx.query<RecordRow[]>(
        `SELECT r.*, c.record_slug FROM data.records r JOIN data.collections c ON c.id = r.collection_id
          WHERE r.expires_at <= $1 AND r.deleted_at IS NULL AND c.deleted_at IS NULL
          ORDER BY r.expires_at LIMIT 100 FOR UPDATE OF r SKIP LOCKED`,
        [now],
      );
      const collections = new Map<string, Collection>();
      let expired = 0;
      for (const row of rows) if (await this.expire(tx, row, collections, now)) expired++;
      return expired;
    });
  }

  private async expire(
    tx: EntityManager,
    row: RecordRow,
    collections: Map<string, Collection>,
    now: Date,
  ): Promise<boolean> {
    await tx.query('SAVEPOINT expire_record');
    try {
      const c =
        collections.get(row.collection_id) ?? (await findCollection(tx, row.workspace_slug, { id: row.collection_id }));
      collections.set(c.id, c);
      await this.writer.delete(tx, c, row, TTL_ACTOR, { permanent: false, emit: true, event: 'record_expired' });
      await tx.query('RELEASE SAVEPOINT expire_record');
      return true;
    } catch (err) {
      if (!(err instanceof StrataException)) throw err;
      await tx.query('ROLLBACK TO SAVEPOINT expire_record');
      await tx.query(`UPDATE data.records SET expires_at = $2::timestamptz + interval '1 hour' WHERE id = $1`, [
        row.id,
        now,
      ]);
      this.logger.warn({ msg: 'expired record kept; retrying in an hour', recordId: row.id, reason: err.message });
      return false;
    }
  }
}
