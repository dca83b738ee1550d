import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ErrorCode, type Collection, type CollectionMetadata, type MigrationEventName } from '@strata/contracts';
import { issueWorkspaceScope, Transactions, type Tx, type WorkspaceScope } from '@strata/db';
import { Clock, PeriodicTask, StrataException } from '@strata/platform';
import { CollectionsRepository } from '../collections/collections.repository.js';
import { MigrationBatch } from '../collections/migrations/migration-batch.js';
import { migrationEvent } from '../collections/migrations/migration-events.js';
import { MigrationSignals } from '../collections/migrations/migration-signals.js';
import {
  MigrationsRepository,
  type MigrationCounts,
  type MigrationRow,
} from '../collections/migrations/migrations.repository.js';
import { DataConfig } from '../data.config.js';
import { Outbox } from '../events/outbox.js';
import { OutboxRelay } from '../events/outbox-relay.js';

type Step = 'more' | 'wait' | 'done';

/**
 * Runs collection migrations (docs/data.md, "Migrations"). Every replica with
 * DATA_MIGRATION_RUNNER_ENABLED looks for unfinished jobs; one claims a job with a session
 * advisory lock, so one runner at a time works on it, and a runner that dies frees it at once
 * (the next poll of any replica takes it over). The job's row is the truth: each batch is one
 * transaction that converts its records and advances the cursor and the counters together, so
 * a batch cut short by a crash is done again whole and nothing is counted twice.
 */
@Injectable()
export class MigrationRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('MigrationRunner');
  private readonly task: PeriodicTask;
  private stopping = false;

  constructor(
    private readonly transactions: Transactions,
    private readonly repository: MigrationsRepository,
    private readonly collections: CollectionsRepository,
    private readonly batch: MigrationBatch,
    private readonly outbox: Outbox,
    private readonly relay: OutboxRelay,
    private readonly signals: MigrationSignals,
    private readonly config: DataConfig,
    private readonly clock: Clock,
  ) {
    this.task = new PeriodicTask('collection migrations', config.DATA_MIGRATION_POLL_INTERVAL_MS, () =>
      this.runUnfinished(),
    );
  }

  onApplicationBootstrap(): void {
    if (!this.config.DATA_MIGRATION_RUNNER_ENABLED) return;
    this.signals.onWake(() => this.task.wake());
    this.task.start(0);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.task.stop();
  }

  /** Runs every unfinished job no other runner holds, one after the other. */
  async runUnfinished(): Promise<void> {
    for (const job of await this.repository.unfinished()) {
      if (this.stopping) return;
      const claim = await this.repository.claim(job.id);
      if (!claim) continue;
      try {
        await this.run(job.id);
      } finally {
        await this.repository.release(job.id, claim);
      }
    }
  }

  private async run(id: string): Promise<void> {
    for (;;) {
      if (this.stopping) return;
      const step = await this.transactions.run((tx) => this.step(tx, id));
      this.relay.wake();
      if (step === 'done') return;
      const pause =
        step === 'wait' ? this.config.DATA_MIGRATION_POLL_INTERVAL_MS : this.config.DATA_MIGRATION_BATCH_PAUSE_MS;
      if (pause > 0) await sleep(pause);
    }
  }

  /** One batch of the job: its transaction holds the job row, so a cancel waits for it (and it for a cancel). */
  private async step(tx: Tx, id: string): Promise<Step> {
    const job = await this.repository.lockJob(tx, id);
    if (!job || job.finished_at) return 'done';
    const scope = issueWorkspaceScope(job.workspace_slug);
    const collection = await this.collection(scope, tx, job);
    if (!collection) {
      await this.repository.finish(tx, job.id, 'failed', this.clock.now(), 'the collection was deleted');
      await this.repository.setMetadata(scope, tx, job.collection_id, finishedMetadata(job.id));
      return 'done';
    }
    const size = this.config.DATA_MIGRATION_BATCH_SIZE;
    if (job.phase === 'scan') {
      const scanned = await this.batch.scan(tx, job, collection.properties, size);
      if (!scanned) {
        await this.repository.advance(tx, job, {
          cursor: job.cursor,
          phase: 'recheck',
          add: {},
          now: this.clock.now(),
        });
        return 'more';
      }
      await this.advance(tx, scope, job, collection, scanned.counts, scanned.cursor, 'scan');
      return 'more';
    }
    const ids = await this.repository.pendingIds(tx, job, size);
    if (ids.length === 0) {
      await this.complete(tx, scope, job, collection);
      return 'done';
    }
    const locked = await this.repository.lockRecords(tx, job, ids);
    const held = new Set(locked.map((r) => r.id));
    const existing = await this.repository.existingIds(
      tx,
      job,
      ids.filter((i) => !held.has(i)),
    );
    await this.repository.dropPending(
      tx,
      job.id,
      ids.filter((i) => !held.has(i) && !existing.has(i)),
    );
    if (locked.length === 0) return existing.size ? 'wait' : 'more';
    const counts = await this.batch.convert(tx, job, collection.properties, locked);
    await this.advance(tx, scope, job, collection, counts, job.cursor, 'recheck');
    return 'more';
  }

  /** Saves a batch's cursor and counts, with a progress event when one is due. */
  private async advance(
    tx: Tx,
    scope: WorkspaceScope,
    job: MigrationRow,
    collection: Collection,
    counts: Partial<MigrationCounts>,
    cursor: string | null,
    phase: MigrationRow['phase'],
  ): Promise<void> {
    const now = this.clock.now();
    const due =
      job.progress_event_at === null ||
      now.getTime() - job.progress_event_at.getTime() >= this.config.DATA_MIGRATION_PROGRESS_EVENT_MS;
    await this.repository.advance(tx, job, {
      cursor,
      phase,
      add: counts,
      now,
      ...(due ? { progressEventAt: now } : {}),
    });
    if (due) await this.emit(tx, scope, 'collection_migration_progress', job.id, collection.recordSlug, now);
  }

  /** The job is over: the collection's flags go down and name it as its last migration. */
  private async complete(tx: Tx, scope: WorkspaceScope, job: MigrationRow, collection: Collection): Promise<void> {
    const now = this.clock.now();
    await this.repository.finish(tx, job.id, job.status === 'cancelling' ? 'cancelled' : 'completed', now);
    await this.repository.setMetadata(scope, tx, collection.id, finishedMetadata(job.id));
    await this.emit(tx, scope, 'collection_migration_finished', job.id, collection.recordSlug, now);
    this.logger.log({ msg: 'collection migration finished', migrationId: job.id, collectionId: collection.id });
  }

  private async emit(
    tx: Tx,
    scope: WorkspaceScope,
    event: MigrationEventName,
    id: string,
    recordSlug: string,
    now: Date,
  ): Promise<void> {
    const job = await this.repository.lockJob(tx, id);
    const pending = await this.repository.pendingCount(id, tx);
    await this.outbox.add(scope, tx, migrationEvent(event, job!, recordSlug, pending, now));
  }

  private async collection(scope: WorkspaceScope, tx: Tx, job: MigrationRow): Promise<Collection | undefined> {
    try {
      return await this.collections.find(scope, { id: job.collection_id }, { tx });
    } catch (err) {
      if (err instanceof StrataException && err.code === ErrorCode.STRUCTURE_NOT_FOUND) return undefined;
      throw err;
    }
  }
}

/** A collection's flags once its migration is over. */
function finishedMetadata(jobId: string): CollectionMetadata {
  return {
    recordWritesLocked: false,
    structureWritesLocked: false,
    migrationInProgress: false,
    lastMigrationId: jobId,
  };
}
