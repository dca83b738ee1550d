import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import {
  ErrorCode,
  type Collection,
  type CollectionMetadata,
  type PropertyDefinition,
  type ReferenceProperty,
  type RetentionPolicy,
  type SchemaDiscoveryConfig,
} from '@strata/contracts';
import { isUniqueViolation, managerOf, rowsOf, type Tx, type WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';

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

/** A collection by id or by slug. */
export type CollectionKey = { readonly id: string } | { readonly slug: string };

/** What a collection's row holds that a create or an update sets. */
export interface CollectionValues {
  readonly recordSlug: string;
  readonly name: string;
  readonly description: string | null;
  readonly properties: readonly PropertyDefinition[];
  readonly status: Collection['status'];
  readonly schemaDiscoveryMode: Collection['schemaDiscoveryMode'];
  readonly schemaDiscoveryConfig: SchemaDiscoveryConfig;
  readonly enableVersioning: boolean;
  readonly retentionPolicy: RetentionPolicy | null;
  readonly defaultSearchField: string | null;
  readonly tags: readonly string[];
}

/** A reference of another collection that points at a collection being written to. */
export interface IncomingReference {
  readonly collectionId: string;
  readonly recordSlug: string;
  readonly properties: PropertyDefinition[];
  readonly enableVersioning: boolean;
  readonly property: ReferenceProperty;
}

export interface ListCollections {
  readonly status?: Collection['status'] | undefined;
  readonly search?: string | undefined;
  /** Soft-deleted collections too. */
  readonly includeDeleted?: boolean | undefined;
  readonly limit: number;
  readonly offset: number;
}

/**
 * data.collections, always within one workspace: every statement carries
 * `workspace_slug = scope.workspace`.
 */
@Injectable()
export class CollectionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * A live collection of the workspace, by id or by slug. With `lock`, the row is
   * held FOR SHARE until the transaction ends, so a schema change waits for the
   * records being written against the current schema.
   */
  async find(scope: WorkspaceScope, by: CollectionKey, options: { tx?: Tx; lock?: boolean } = {}): Promise<Collection> {
    return (await this.findRevision(scope, by, options)).collection;
  }

  /** {@link find}, with the row's `xmin`: every change to the collection row gives it a new one. */
  async findRevision(
    scope: WorkspaceScope,
    by: CollectionKey,
    options: { tx?: Tx; lock?: boolean } = {},
  ): Promise<{ collection: Collection; revision: string }> {
    const [column, value] = 'id' in by ? ['id', by.id] : ['record_slug', by.slug];
    const rows = await managerOf(this.db, options.tx).query<(CollectionRow & { revision: string })[]>(
      `SELECT *, xmin::text AS revision FROM data.collections
        WHERE workspace_slug = $1 AND ${column} = $2 AND deleted_at IS NULL${options.lock ? ' FOR SHARE' : ''}`,
      [scope.workspace, value],
    );
    if (!rows[0]) {
      throw StrataException.notFound(
        `Collection ${'id' in by ? by.id : `'${by.slug}'`} not found`,
        ErrorCode.STRUCTURE_NOT_FOUND,
      );
    }
    return { collection: toCollection(rows[0]), revision: rows[0].revision };
  }

  async list(scope: WorkspaceScope, query: ListCollections): Promise<{ rows: Collection[]; total: number }> {
    const params: unknown[] = [
      scope.workspace,
      query.status ?? null,
      query.search ? `%${escapeLike(query.search)}%` : null,
      query.includeDeleted === true,
    ];
    const where = `workspace_slug = $1 AND (deleted_at IS NULL OR $4::boolean)
      AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR name ILIKE $3 OR record_slug ILIKE $3)`;
    const [rows, counted] = await Promise.all([
      this.db.query<CollectionRow[]>(
        `SELECT * FROM data.collections WHERE ${where} ORDER BY created_at, id LIMIT $5 OFFSET $6`,
        [...params, query.limit, query.offset],
      ),
      this.db.query<[{ n: number }]>(`SELECT count(*)::int AS n FROM data.collections WHERE ${where}`, params),
    ]);
    return { rows: rows.map(toCollection), total: counted[0].n };
  }

  /**
   * Serialises schema changes in the workspace (a transaction-scoped advisory
   * lock), then reads its live collections, locked FOR UPDATE when asked.
   */
  async lockWorkspace(scope: WorkspaceScope, tx: Tx, forUpdate = false): Promise<CollectionRow[]> {
    const db = managerOf(this.db, tx);
    await db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`data-collections:${scope.workspace}`]);
    return db.query<CollectionRow[]>(
      `SELECT * FROM data.collections WHERE workspace_slug = $1 AND deleted_at IS NULL${forUpdate ? ' FOR UPDATE' : ''}`,
      [scope.workspace],
    );
  }

  async insert(
    scope: WorkspaceScope,
    tx: Tx,
    row: CollectionValues & { id: string; metadata: CollectionMetadata; actor: string },
  ): Promise<Collection> {
    const rows = await managerOf(this.db, tx)
      .query<CollectionRow[]>(
        `INSERT INTO data.collections (id, workspace_slug, record_slug, name, description, properties, status,
           schema_discovery_mode, schema_discovery_config, enable_versioning, retention_policy, default_search_field,
           tags, metadata, created_by, last_updated_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15) RETURNING *`,
        [
          row.id,
          scope.workspace,
          row.recordSlug,
          row.name,
          row.description,
          JSON.stringify(row.properties),
          row.status,
          row.schemaDiscoveryMode,
          row.schemaDiscoveryConfig,
          row.enableVersioning,
          row.retentionPolicy,
          row.defaultSearchField,
          row.tags,
          row.metadata,
          row.actor,
        ],
      )
      .catch((err: unknown) => {
        if (isUniqueViolation(err))
          throw StrataException.conflict(`A collection with recordSlug '${row.recordSlug}' already exists`);
        throw err;
      });
    return toCollection(rows[0]!);
  }

  async update(
    scope: WorkspaceScope,
    tx: Tx,
    id: string,
    row: Omit<CollectionValues, 'recordSlug'> & { actor: string },
  ): Promise<Collection> {
    const rows = rowsOf<CollectionRow>(
      await managerOf(this.db, tx).query(
        `UPDATE data.collections SET name = $3, description = $4, properties = $5, status = $6,
           schema_discovery_mode = $7, schema_discovery_config = $8, enable_versioning = $9, retention_policy = $10,
           default_search_field = $11, tags = $12, last_updated_by = $13, updated_at = now()
         WHERE workspace_slug = $1 AND id = $2 RETURNING *`,
        [
          scope.workspace,
          id,
          row.name,
          row.description,
          JSON.stringify(row.properties),
          row.status,
          row.schemaDiscoveryMode,
          row.schemaDiscoveryConfig,
          row.enableVersioning,
          row.retentionPolicy,
          row.defaultSearchField,
          row.tags,
          row.actor,
        ],
      ),
    );
    if (!rows[0]) throw StrataException.notFound(`Collection ${id} not found`, ErrorCode.STRUCTURE_NOT_FOUND);
    return toCollection(rows[0]);
  }

  /**
   * Brings a soft-deleted collection back (its records with it); undefined when the
   * workspace has no deleted collection of that id. 409 when a live collection has taken
   * its slug meanwhile.
   */
  async restore(scope: WorkspaceScope, tx: Tx, id: string, actor: string): Promise<Collection | undefined> {
    let rows: CollectionRow[];
    try {
      rows = rowsOf<CollectionRow>(
        await managerOf(this.db, tx).query(
          `UPDATE data.collections SET deleted_at = NULL, last_updated_by = $3, updated_at = now()
            WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NOT NULL RETURNING *`,
          [scope.workspace, id, actor],
        ),
      );
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw StrataException.conflict(
          `Collection ${id} cannot be restored: another collection has taken its recordSlug`,
        );
      }
      throw err;
    }
    return rows[0] ? toCollection(rows[0]) : undefined;
  }

  /** A soft-deleted collection of the workspace, locked for its restore; undefined when there is none. */
  async findDeleted(scope: WorkspaceScope, tx: Tx, id: string): Promise<CollectionRow | undefined> {
    const rows = await managerOf(this.db, tx).query<CollectionRow[]>(
      `SELECT * FROM data.collections WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NOT NULL FOR UPDATE`,
      [scope.workspace, id],
    );
    return rows[0];
  }

  /** Soft delete: the row stays (records keep their collection) and its slug is free again. */
  async softDelete(scope: WorkspaceScope, tx: Tx, id: string, actor: string): Promise<Date> {
    const rows = rowsOf<{ deleted_at: Date }>(
      await managerOf(this.db, tx).query(
        `UPDATE data.collections SET deleted_at = now(), last_updated_by = $3
          WHERE workspace_slug = $1 AND id = $2 AND deleted_at IS NULL RETURNING deleted_at`,
        [scope.workspace, id, actor],
      ),
    );
    if (!rows[0]) throw StrataException.notFound(`Collection ${id} not found`, ErrorCode.STRUCTURE_NOT_FOUND);
    return rows[0].deleted_at;
  }

  /** Every reference property of the workspace's live collections that targets `recordSlug`. */
  async incomingReferences(scope: WorkspaceScope, tx: Tx, recordSlug: string): Promise<IncomingReference[]> {
    const rows = await managerOf(this.db, tx).query<
      { id: string; record_slug: string; properties: PropertyDefinition[]; enable_versioning: boolean }[]
    >(
      `SELECT id, record_slug, properties, enable_versioning FROM data.collections
        WHERE workspace_slug = $1 AND deleted_at IS NULL AND properties @> $2::jsonb`,
      [scope.workspace, JSON.stringify([{ type: 'reference', target: recordSlug }])],
    );
    return rows.flatMap((c) =>
      c.properties
        .filter((p): p is ReferenceProperty => p.type === 'reference' && p.target === recordSlug)
        .map((property) => ({
          collectionId: c.id,
          recordSlug: c.record_slug,
          properties: c.properties,
          enableVersioning: c.enable_versioning,
          property,
        })),
    );
  }
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
