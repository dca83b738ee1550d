import { Injectable } from '@nestjs/common';
import {
  DEFAULT_SCHEMA_DISCOVERY_CONFIG,
  ErrorCode,
  type Collection,
  type CollectionMetadata,
  type FieldError,
} from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import { Transactions, type Tx, type WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import { CollectionsRepository } from './collections.repository.js';
import { checkCollectionChange, checkNewCollection, targets } from './definition-checks.js';
import { dependentsOf } from './dependents.js';
import { PropertyIndexer } from './indexes/property-indexer.js';
import { MigrationStarter } from './migrations/migration-starter.js';
import { RecordValuesRepository } from './properties/record-values.repository.js';
import { uniqueFields } from '../records/unique-values.js';
import { SecretFieldsRepository } from './secret-fields.repository.js';
import { validateProperties } from '../schema/validate-properties.js';
import type {
  CreateCollectionRequest,
  ListCollectionsQuery,
  UpdateCollectionRequest,
} from './dto/collection.requests.js';

/** Unique-value rows of a field no longer unique dropped per statement, after a PUT. */
const UNIQUE_DROP_BATCH = 1000;

const INITIAL_METADATA: CollectionMetadata = {
  recordWritesLocked: false,
  structureWritesLocked: false,
  migrationInProgress: false,
};

export interface CollectionPage {
  results: Collection[];
  pagination: { limit: number; offset: number; total: number; hasMore: boolean };
}

export { dependentsOf };

/**
 * Collections of a workspace. Every change runs under a per-workspace advisory
 * lock, so slug generation, reference checks and cycle detection see a stable
 * set of collections even with many replicas.
 */
@Injectable()
export class CollectionsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly repository: CollectionsRepository,
    private readonly indexes: PropertyIndexer,
    private readonly secretFields: SecretFieldsRepository,
    private readonly migrations: MigrationStarter,
    private readonly values: RecordValuesRepository,
  ) {}

  /**
   * `earlier`: the body's own problems (checkBody); when there are any, `body` lacks the fields
   * that failed. Inside `within` when given (a caller's transaction, which schedules the
   * indexes once it commits), else in a new one.
   */
  async create(
    scope: WorkspaceScope,
    actor: string,
    body: CreateCollectionRequest,
    earlier: readonly FieldError[] = [],
    within?: Tx,
  ): Promise<Collection> {
    const run = <T>(work: (tx: Tx) => Promise<T>) => (within ? work(within) : this.transactions.run(work));
    const created = await run(async (tx) => {
      const others = await this.repository.lockWorkspace(scope, tx);
      if (body.recordSlug !== undefined && others.some((c) => c.record_slug === body.recordSlug)) {
        throw StrataException.conflict(`A collection with recordSlug '${body.recordSlug}' already exists`);
      }
      const { recordSlug, mode, properties, issues } = checkNewCollection(body, earlier, others);
      if (issues.length) throw StrataException.validation([...issues]);
      return this.repository.insert(scope, tx, {
        id: newUuid(),
        recordSlug,
        name: body.name,
        description: body.description ?? null,
        properties,
        status: body.status ?? 'active',
        schemaDiscoveryMode: mode ?? 'strict',
        schemaDiscoveryConfig: { ...DEFAULT_SCHEMA_DISCOVERY_CONFIG, ...defined(body.schemaDiscoveryConfig) },
        enableVersioning: body.enableVersioning ?? false,
        retentionPolicy: body.retentionPolicy ? defined(body.retentionPolicy) : null,
        defaultSearchField: body.defaultSearchField ?? null,
        tags: body.tags ?? [],
        metadata: INITIAL_METADATA,
        actor,
      });
    });
    if (!within) this.indexes.schedule(created.id);
    return created;
  }

  get(scope: WorkspaceScope, id: string): Promise<Collection> {
    return this.repository.find(scope, { id });
  }

  getBySlug(scope: WorkspaceScope, recordSlug: string): Promise<Collection> {
    return this.repository.find(scope, { slug: recordSlug });
  }

  async list(scope: WorkspaceScope, query: ListCollectionsQuery): Promise<CollectionPage> {
    const limit = query.limit ?? 20;
    const offset = query.offset ?? 0;
    const { rows, total } = await this.repository.list(scope, {
      status: query.status,
      search: query.search,
      includeDeleted: query.includeDeleted,
      limit,
      offset,
    });
    return { results: rows, pagination: { limit, offset, total, hasMore: offset + rows.length < total } };
  }

  /** Updates a collection; inside `within` when given (its caller's transaction), else in a new one. */
  async update(
    scope: WorkspaceScope,
    id: string,
    actor: string,
    body: UpdateCollectionRequest,
    within?: Tx,
    earlier: readonly FieldError[] = [],
  ): Promise<Collection> {
    const run = <T>(work: (tx: Tx) => Promise<T>) => (within ? work(within) : this.transactions.run(work));
    let noLongerUnique: string[] = [];
    // Inside a caller's transaction the change is not committed yet: the caller's changes
    // (a property accepted from a suggestion) never need an index, and boot reconciles all.
    const updated = await run(async (tx) => {
      const all = await this.repository.lockWorkspace(scope, tx, true);
      const current = all.find((c) => c.id === id);
      if (!current) throw notFound(`Collection ${id} not found`);
      const { mode, properties, defaultSearchField, issues } = checkCollectionChange(
        body,
        earlier,
        current,
        all.filter((c) => c.id !== id),
      );
      if (issues.length) throw StrataException.validation([...issues]);
      this.migrations.refuseWhileMigrating(current, properties);
      const stillUnique = new Set(uniqueFields(properties));
      noLongerUnique = uniqueFields(current.properties).filter((f) => !stillUnique.has(f));
      await this.secretFields.apply(scope, tx, id, current.properties, properties);
      // Existing records that must meet the new definition are converted by a job (docs/data.md, "Migrations").
      await this.migrations.start(scope, tx, current, properties, actor);
      return this.repository.update(scope, tx, id, {
        name: body.name ?? current.name,
        description: body.description !== undefined ? body.description : current.description,
        properties,
        status: body.status ?? current.status,
        schemaDiscoveryMode: mode ?? current.schema_discovery_mode,
        schemaDiscoveryConfig: { ...current.schema_discovery_config, ...defined(body.schemaDiscoveryConfig) },
        enableVersioning: body.enableVersioning ?? current.enable_versioning,
        retentionPolicy: body.retentionPolicy !== undefined ? defined(body.retentionPolicy) : current.retention_policy,
        defaultSearchField: defaultSearchField ?? null,
        tags: body.tags ?? current.tags,
        actor,
      });
    });
    if (!within) {
      // The unique-value rows of a field no longer unique go after the commit, in short batches,
      // so that the same value is free if a unique property of that name comes back. (Inside a
      // caller's transaction, the caller clears them: the property removal does.)
      for (const field of noLongerUnique) {
        while ((await this.values.dropStaleUniqueBatch(scope, id, field, UNIQUE_DROP_BATCH)) === UNIQUE_DROP_BATCH);
      }
      this.indexes.schedule(id);
    }
    return updated;
  }

  /** Soft delete: the collection disappears and frees its slug; refused while another collection references it. */
  async delete(
    scope: WorkspaceScope,
    id: string,
    actor: string,
  ): Promise<{ success: true; id: string; deletedAt: string }> {
    const deleted = await this.transactions.run(async (tx) => {
      const all = await this.repository.lockWorkspace(scope, tx, true);
      const current = all.find((c) => c.id === id);
      if (!current) throw notFound(`Collection ${id} not found`);
      if (current.metadata.migrationInProgress) {
        throw StrataException.conflict(
          `Collection ${id} is migrating its records (migration ${current.metadata.migrationJobId}): cancel it or wait for it before deleting`,
        );
      }
      const referencing = dependentsOf(
        current.record_slug,
        all.filter((c) => c.id !== id),
      );
      if (referencing.length) {
        const names = [...new Set(referencing.map((d) => `${d.collection}.${d.property}`))].join(', ');
        throw StrataException.conflict(`Collection '${current.record_slug}' is referenced by ${names}`);
      }
      const deletedAt = await this.repository.softDelete(scope, tx, id, actor);
      return { success: true as const, id, deletedAt: deletedAt.toISOString() };
    });
    this.indexes.schedule(id);
    return deleted;
  }

  /**
   * Brings back a soft-deleted collection, with its records (they were never deleted). 404 when
   * the workspace has no deleted collection of that id; 409 when it is live, when a live
   * collection has taken its recordSlug, or when its definition no longer fits the workspace
   * (a reference to a collection or field that is gone).
   */
  async restore(scope: WorkspaceScope, id: string, actor: string): Promise<Collection> {
    const restored = await this.transactions.run(async (tx) => {
      const live = await this.repository.lockWorkspace(scope, tx);
      if (live.some((c) => c.id === id)) throw StrataException.conflict(`Collection ${id} is not deleted`);
      const deleted = await this.repository.findDeleted(scope, tx, id);
      if (!deleted) throw notFound(`Collection ${id} not found`);
      const holder = live.find((c) => c.record_slug === deleted.record_slug);
      if (holder) {
        throw StrataException.conflict(
          `Collection ${id} cannot be restored: collection ${holder.id} has taken its recordSlug '${deleted.record_slug}'`,
        );
      }
      const { issues } = validateProperties(deleted.properties, {
        collectionSlug: deleted.record_slug,
        collections: targets(live),
        newId: newUuid,
      });
      if (issues.count) {
        const problems = issues.list.map((i) => `${i.field} ${i.message}`).join('; ');
        throw StrataException.conflict(`Collection ${id} cannot be restored: ${problems}`);
      }
      const back = await this.repository.restore(scope, tx, id, actor);
      if (!back) throw notFound(`Collection ${id} not found`);
      return back;
    });
    this.indexes.schedule(id);
    return restored;
  }
}

function notFound(message: string): StrataException {
  return StrataException.notFound(message, ErrorCode.STRUCTURE_NOT_FOUND);
}

/**
 * The fields of a validated DTO that were sent. DTO classes declare every
 * optional field, so an instance holds `undefined` for the absent ones, and a
 * spread would overwrite stored values with them.
 */
function defined<T extends object>(dto: T | undefined): Partial<T> {
  if (!dto) return {};
  return Object.fromEntries(Object.entries(dto).filter(([, v]) => v !== undefined)) as Partial<T>;
}
