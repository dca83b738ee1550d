import { Injectable } from '@nestjs/common';
import { ErrorCode, type CollectionMetadata, type PropertyDefinition } from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import { afterCommit, type Tx, type WorkspaceScope } from '@strata/db';
import { Clock, StrataException } from '@strata/platform';
import { Outbox } from '../../events/outbox.js';
import { OutboxRelay } from '../../events/outbox-relay.js';
import type { CollectionRow } from '../collections.repository.js';
import { canonicalJson } from '../../schema/value-check.js';
import { migrationEvent } from './migration-events.js';
import { planMigration } from './migration-plan.js';
import { MigrationSignals } from './migration-signals.js';
import { MigrationsRepository } from './migrations.repository.js';

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
    private readonly clock: Clock,
  ) {}

  /** A change of the properties while a migration runs is refused: one migration at a time. */
  refuseWhileMigrating(current: CollectionRow, properties: readonly PropertyDefinition[]): void {
    if (!current.metadata.migrationInProgress) return;
    // Ids are generated for properties sent without one: the same definition sent again is no change.
    if (canonicalJson(withoutIds(properties)) === canonicalJson(withoutIds(current.properties))) return;
    throw StrataException.conflict(
      `Collection ${current.id} is migrating its records (migration ${current.metadata.migrationJobId}): ` +
        'its properties cannot change until the migration ends; wait for it or cancel it',
      ErrorCode.CONFLICT,
    );
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
    const fields = planMigration(current.properties, properties);
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
    const metadata: CollectionMetadata = {
      ...current.metadata,
      recordWritesLocked: false,
      structureWritesLocked: true,
      migrationInProgress: true,
      migrationJobId: job.id,
    };
    await this.repository.setMetadata(scope, tx, current.id, metadata);
    await this.outbox.add(scope, tx, migrationEvent('collection_migration_started', job, current.record_slug, 0, now));
    afterCommit(tx, () => {
      this.signals.wake();
      this.relay.wake();
    });
    return metadata;
  }
}

/** The definitions without their ids, at any depth. */
function withoutIds(properties: readonly PropertyDefinition[]): unknown {
  return JSON.parse(JSON.stringify(properties, (key, value: unknown) => (key === 'id' ? undefined : value)));
}
