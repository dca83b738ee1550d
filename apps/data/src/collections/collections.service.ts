import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import {
  DEFAULT_SCHEMA_DISCOVERY_CONFIG,
  ErrorCode,
  type Collection,
  type CollectionMetadata,
  type PropertyDefinition,
  type ReferenceProperty,
  type RetentionPolicy,
  type SchemaDiscoveryConfig,
} from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import { isUniqueViolation, rowsOf } from '@strata/db';
import { StrataException } from '@strata/platform';
import { Issues } from '../schema/issues.js';
import { PropertyIndexer } from './indexes/property-indexer.js';
import { SecretFieldChanges } from '../records/secret-field-changes.js';
import { validateProperties } from '../schema/validate-properties.js';
import type { ReferenceTarget } from '../schema/references.js';
import {
  checkDefaultSearchField,
  checkDependents,
  checkImmutable,
  discoveryMode,
  freeSlug,
  slugify,
  type Dependent,
} from './collection-rules.js';
import type {
  CreateCollectionRequest,
  ListCollectionsQuery,
  UpdateCollectionRequest,
} from './dto/collection.requests.js';

export interface CollectionRow {
  id: string;
  workspace_slug: string;
  record_slug: string;
  name: string;
  description: string | null;
  properties: PropertyDefinition[];
  status: Collection['status'];
  schema_discovery_mode: Collection['schemaDiscoveryMode'];
  schema_discovery_config: SchemaDiscoveryConfig;
  enable_versioning: boolean;
  retention_policy: RetentionPolicy | null;
  default_search_field: string | null;
  tags: string[];
  metadata: CollectionMetadata;
  created_by: string;
  last_updated_by: string;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

const INITIAL_METADATA: CollectionMetadata = {
  recordWritesLocked: false,
  structureWritesLocked: false,
  migrationInProgress: false,
};

export interface CollectionPage {
  results: Collection[];
  pagination: { limit: number; offset: number; total: number; hasMore: boolean };
}

/**
 * Collections of a workspace. Every change runs under a per-workspace advisory
 * lock, so slug generation, reference checks and cycle detection see a stable
 * set of collections even with many replicas.
 */
@Injectable()
export class CollectionsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly indexes: PropertyIndexer,
    private readonly secretFields: SecretFieldChanges,
  ) {}

  async create(workspace: string, actor: string, body: CreateCollectionRequest): Promise<Collection> {
    const created = await this.db.transaction(async (tx) => {
      const others = await this.lockAndLoad(tx, workspace);
      const taken = new Set(others.map((c) => c.record_slug));
      if (body.recordSlug !== undefined && taken.has(body.recordSlug)) {
        throw StrataException.conflict(`A collection with recordSlug '${body.recordSlug}' already exists`);
      }
      const recordSlug = body.recordSlug ?? freeSlug(slugify(body.name), taken);
      const issues = new Issues();
      const mode = discoveryMode(body, issues);
      const { properties, issues: propertyIssues } = validateProperties(body.properties ?? [], {
        collectionSlug: recordSlug,
        collections: targets(others),
        newId: newUuid,
      });
      propertyIssues.list.forEach((i) => issues.add(i.field, i.message));
      checkDefaultSearchField(body.defaultSearchField, properties, issues);
      if (issues.count) throw StrataException.validation([...issues.list]);
      const rows = await tx
        .query<CollectionRow[]>(
          `INSERT INTO data.collections (id, workspace_slug, record_slug, name, description, properties, status,
           schema_discovery_mode, schema_discovery_config, enable_versioning, retention_policy, default_search_field,
           tags, metadata, created_by, last_updated_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15) RETURNING *`,
          [
            newUuid(),
            workspace,
            recordSlug,
            body.name,
            body.description ?? null,
            JSON.stringify(properties),
            body.status ?? 'active',
            mode ?? 'strict',
            { ...DEFAULT_SCHEMA_DISCOVERY_CONFIG, ...defined(body.schemaDiscoveryConfig) },
            body.enableVersioning ?? false,
            body.retentionPolicy ? defined(body.retentionPolicy) : null,
            body.defaultSearchField ?? null,
            body.tags ?? [],
            INITIAL_METADATA,
            actor,
          ],
        )
        .catch((err: unknown) => {
          if (isUniqueViolation(err))
            throw StrataException.conflict(`A collection with recordSlug '${recordSlug}' already exists`);
          throw err;
        });
      return toCollection(rows[0]!);
    });
    this.indexes.schedule(created.id);
    return created;
  }

  async get(workspace: string, id: string): Promise<Collection> {
    const rows = await this.db.query<CollectionRow[]>(
      'SELECT * FROM data.collections WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NULL',
      [workspace, id],
    );
    if (!rows[0]) throw notFound(`Collection ${id} not found`);
    return toCollection(rows[0]);
  }

  async getBySlug(workspace: string, recordSlug: string): Promise<Collection> {
    const rows = await this.db.query<CollectionRow[]>(
      'SELECT * FROM data.collections WHERE workspace_slug = $1 AND record_slug = $2 AND deleted_at IS NULL',
      [workspace, recordSlug],
    );
    if (!rows[0]) throw notFound(`Collection '${recordSlug}' not found`);
    return toCollection(rows[0]);
  }

  async list(workspace: string, query: ListCollectionsQuery): Promise<CollectionPage> {
    const limit = query.limit ?? 20;
    const offset = query.offset ?? 0;
    const params: unknown[] = [workspace, query.status ?? null, query.search ? `%${escapeLike(query.search)}%` : null];
    const where = `workspace_slug = $1 AND deleted_at IS NULL
      AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR name ILIKE $3 OR record_slug ILIKE $3)`;
    const [rows, counted] = await Promise.all([
      this.db.query<CollectionRow[]>(
        `SELECT * FROM data.collections WHERE ${where} ORDER BY created_at, id LIMIT $4 OFFSET $5`,
        [...params, limit, offset],
      ),
      this.db.query<[{ n: number }]>(`SELECT count(*)::int AS n FROM data.collections WHERE ${where}`, params),
    ]);
    const total = counted[0].n;
    return {
      results: rows.map(toCollection),
      pagination: { limit, offset, total, hasMore: offset + rows.length < total },
    };
  }

  /** Updates a collection; inside `within` when given (its caller's transaction), else in a new one. */
  async update(
    workspace: string,
    id: string,
    actor: string,
    body: UpdateCollectionRequest,
    within?: EntityManager,
  ): Promise<Collection> {
    const run = <T>(work: (tx: EntityManager) => Promise<T>) => (within ? work(within) : this.db.transaction(work));
    // Inside a caller's transaction the change is not committed yet: the caller's changes
    // (a property accepted from a suggestion) never need an index, and boot reconciles all.
    const updated = await run(async (tx) => {
      const all = await this.lockAndLoad(tx, workspace, true);
      const current = all.find((c) => c.id === id);
      if (!current) throw notFound(`Collection ${id} not found`);
      const others = all.filter((c) => c.id !== id);
      const issues = new Issues();
      if (body.recordSlug !== undefined && body.recordSlug !== current.record_slug) {
        issues.add('recordSlug', `is fixed at creation and cannot be changed (it is '${current.record_slug}')`);
      }
      const mode = discoveryMode(body, issues);
      let properties = current.properties;
      if (body.properties !== undefined) {
        const validated = validateProperties(body.properties, {
          collectionSlug: current.record_slug,
          collections: targets(others),
          newId: newUuid,
        });
        validated.issues.list.forEach((i) => issues.add(i.field, i.message));
        properties = validated.properties;
        checkImmutable(current.properties, properties, issues);
        checkDependents(properties, dependentsOf(current.record_slug, others), issues);
      }
      const defaultSearchField =
        body.defaultSearchField !== undefined ? body.defaultSearchField : (current.default_search_field ?? undefined);
      checkDefaultSearchField(defaultSearchField, properties, issues);
      if (issues.count) throw StrataException.validation([...issues.list]);
      await this.secretFields.apply(tx, id, current.properties, properties);
      const rows = rowsOf<CollectionRow>(
        await tx.query(
          `UPDATE data.collections SET name = $3, description = $4, properties = $5, status = $6,
           schema_discovery_mode = $7, schema_discovery_config = $8, enable_versioning = $9, retention_policy = $10,
           default_search_field = $11, tags = $12, last_updated_by = $13, updated_at = now()
         WHERE workspace_slug = $1 AND id = $2 RETURNING *`,
          [
            workspace,
            id,
            body.name ?? current.name,
            body.description !== undefined ? body.description : current.description,
            JSON.stringify(properties),
            body.status ?? current.status,
            mode ?? current.schema_discovery_mode,
            { ...current.schema_discovery_config, ...defined(body.schemaDiscoveryConfig) },
            body.enableVersioning ?? current.enable_versioning,
            body.retentionPolicy !== undefined ? defined(body.retentionPolicy) : current.retention_policy,
            defaultSearchField ?? null,
            body.tags ?? current.tags,
            actor,
          ],
        ),
      );
      return toCollection(rows[0]!);
    });
    if (!within) this.indexes.schedule(id);
    return updated;
  }

  /** Soft delete: the collection disappears and frees its slug; refused while another collection references it. */
  async delete(
    workspace: string,
    id: string,
    actor: string,
  ): Promise<{ success: true; id: string; deletedAt: string }> {
    const deleted = await this.db.transaction(async (tx) => {
      const all = await this.lockAndLoad(tx, workspace, true);
      const current = all.find((c) => c.id === id);
      if (!current) throw notFound(`Collection ${id} not found`);
      const referencing = dependentsOf(
        current.record_slug,
        all.filter((c) => c.id !== id),
      );
      if (referencing.length) {
        const names = [...new Set(referencing.map((d) => `${d.collection}.${d.property}`))].join(', ');
        throw StrataException.conflict(`Collection '${current.record_slug}' is referenced by ${names}`);
      }
      const rows = rowsOf<{ deleted_at: Date }>(
        await tx.query(
          `UPDATE data.collections SET deleted_at = now(), last_updated_by = $3 WHERE workspace_slug = $1 AND id = $2
           RETURNING deleted_at`,
          [workspace, id, actor],
        ),
      );
      return { success: true as const, id, deletedAt: rows[0]!.deleted_at.toISOString() };
    });
    this.indexes.schedule(id);
    return deleted;
  }

  /** Serialises schema changes per workspace, then reads its live collections. */
  private async lockAndLoad(tx: EntityManager, workspace: string, forUpdate = false): Promise<CollectionRow[]> {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`data-collections:${workspace}`]);
    return tx.query<CollectionRow[]>(
      `SELECT * FROM data.collections WHERE workspace_slug = $1 AND deleted_at IS NULL${forUpdate ? ' FOR UPDATE' : ''}`,
      [workspace],
    );
  }
}

function targets(rows: readonly CollectionRow[]): ReadonlyMap<string, ReferenceTarget> {
  return new Map(rows.map((r) => [r.record_slug, { recordSlug: r.record_slug, properties: r.properties }]));
}

/** The references of other collections that point at `recordSlug`, with each field they name. */
function dependentsOf(recordSlug: string, others: readonly CollectionRow[]): Dependent[] {
  return others.flatMap((c) =>
    c.properties
      .filter((p): p is ReferenceProperty => p.type === 'reference' && p.target === recordSlug)
      .flatMap((p) =>
        [p.targetField, p.displayField]
          .filter((f): f is string => f !== undefined)
          .map((field) => ({ collection: c.record_slug, property: p.name, field })),
      ),
  );
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

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export function toCollection(row: CollectionRow): Collection {
  return {
    id: row.id,
    workspaceSlug: row.workspace_slug,
    recordSlug: row.record_slug,
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    properties: row.properties,
    status: row.status,
    schemaDiscoveryMode: row.schema_discovery_mode,
    schemaDiscoveryConfig: row.schema_discovery_config,
    enableVersioning: row.enable_versioning,
    ...(row.retention_policy ? { retentionPolicy: row.retention_policy } : {}),
    ...(row.default_search_field !== null ? { defaultSearchField: row.default_search_field } : {}),
    metadata: row.metadata,
    tags: row.tags,
    createdBy: row.created_by,
    lastUpdatedBy: row.last_updated_by,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    isDeleted: row.deleted_at !== null,
  };
}
