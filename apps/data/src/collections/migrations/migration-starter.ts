import { Injectable } from '@nestjs/common';
import { ErrorCode, type CollectionMetadata, type PropertyDefinition } from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import { afterCommit, type Tx, type WorkspaceScope } from '@strata/db';
import { Clock, StrataException } from '@strata/platform';
import { DataConfig } from '../../data.config.js';
import { Outbox } from '../../events/outbox.js';
import { OutboxRelay } from '../../events/outbox-relay.js';
import type { CollectionRow } from '../collections.repository.js';
import { canonicalJson } from '../../schema/value-check.js';
import { MigrationBatch } from './migration-batch.js';
import { migrationEvent } from './migration-events.js';
import { newOptionalProperties, planMigration, withoutIds } from './migration-plan.js';
import { MigrationSignals } from './migration-signals.js';
import { MigrationsRepository, type MigrationRow } from './migrations.repository.js';

/**
 * The switch-over of a collection change whose new definition existing records must meet
 * (docs/data.md, "Migrations"): inside the change's transaction, which holds the collection
 * row FOR UPDATE (record writes in flight finish first; none is refused), it records the job
 * and flags the collection. Writes after the commit are validated against the new definition;
 * the runner converts the records written before.
 */
@Injectable()
export class MigrationStarter {
  constructor(
    private readonly repository: MigrationsRepository,
    private readonly outbox: Outbox,
    private readonly relay: OutboxRelay,
    private readonly signals: MigrationSignals,
    private readonly batch: MigrationBatch,
    private readonly config: DataConfig,
    private readonly clock: Clock,
  ) {}

  /** A change of the properties while a migration runs is refused: one migration at a time. */
  refuseWhileMigrating(current: CollectionRow, properties: readonly PropertyDefinition[]): void {
    if (!current.metadata.migrationInProgress) return;
    // Ids are generated for properties sent without one: the same definition sent again is no change.
    if (canonicalJson(withoutIds(properties)) === canonicalJson(withoutIds(current.properties))) return;
    throw migrationRunning(current);
  }

  /**
   * Starts a migration when the change needs one (and the collection has records); returns the
   * collection's new metadata, or undefined when no migration is needed.
   */
  async start(
    scope: WorkspaceScope,
    tx: Tx,
    current: CollectionRow,
    properties: readonly PropertyDefinition[],
    actor: string,
  ): Promise<CollectionMetadata | undefined> {
    // New properties over values records already hold (auto-evolving, schemaless) are migrated too.
    const held = await this.repository.heldFields(
      scope,
      tx,
      current.id,
      newOptionalProperties(current.properties, properties),
    );
    const fields = planMigration(current.properties, properties, held);
    if (fields.length === 0) return undefined;
    const total = await this.repository.countRecords(scope, tx, current.id);
    if (total === 0) return undefined;
    const now = this.clock.now();
    const job = await this.repository.insert(scope, tx, {
      id: newUuid(),
      collectionId: current.id,
      fields,
      from: current.properties,
      to: properties,
      total,
      actor,
      now,
    });
    await this.outbox.add(scope, tx, migrationEvent('collection_migration_started', job, current.record_slug, 0, now));
    afterCommit(tx, () => {
      this.signals.wake();
      this.relay.wake();
    });
    if (total <= this.config.DATA_MIGRATION_INLINE_RECORDS && (await this.runInline(tx, job, properties))) {
      const done = await this.repository.finish(tx, job.id, 'completed', this.clock.now());
      await this.outbox.add(
        scope,
        tx,
        migrationEvent('collection_migration_finished', done, current.record_slug, 0, this.clock.now()),
      );
      const metadata: CollectionMetadata = {
        recordWritesLocked: false,
        structureWritesLocked: false,
        migrationInProgress: false,
        lastMigrationId: job.id,
      };
      await this.repository.setMetadata(scope, tx, current.id, metadata);
      return metadata;
    }
    const metadata: CollectionMetadata = {
      ...current.metadata,
      recordWritesLocked: false,
      structureWritesLocked: true,
      migrationInProgress: true,
      migrationJobId: job.id,
    };
    await this.repository.setMetadata(scope, tx, current.id, metadata);
    return metadata;
  }

  /**
   * Scans a small collection in the change's transaction, which holds the collection row FOR
   * UPDATE: no write to it is in flight, so the batches wait for nothing. True when every record
   * was converted or listed; false when a client held one (an update that locked its record
   * before the collection): the scan is saved, and the runner takes the job from there.
   */
  private async runInline(tx: Tx, job: MigrationRow, properties: readonly PropertyDefinition[]): Promise<boolean> {
    let row = job;
    let skipped = 0;
    for (;;) {
      const scanned = await this.batch.scan(tx, row, properties, this.config.DATA_MIGRATION_BATCH_SIZE);
      if (!scanned) break;
      skipped += scanned.skipped;
      await this.repository.advance(tx, row, {
        cursor: scanned.cursor,
        phase: 'scan',
        add: scanned.counts,
        now: this.clock.now(),
      });
      row = { ...row, cursor: scanned.cursor };
    }
    if (skipped === 0) return true;
    await this.repository.advance(tx, row, { cursor: row.cursor, phase: 'recheck', add: {}, now: this.clock.now() });
    return false;
  }
}

/** The 409 of a properties change (a PUT, a property removal) while the collection migrates: it names the job. */
export function migrationRunning(current: Pick<CollectionRow, 'id' | 'metadata'>): StrataException {
  return StrataException.conflict(
    `Collection ${current.id} is migrating its records (migration ${current.metadata.migrationJobId}): ` +
      'its properties cannot change until the migration ends; wait for it or cancel it',
    ErrorCode.CONFLICT,
  );
}
