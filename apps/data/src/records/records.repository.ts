import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { ErrorCode, type Collection } from '@strata/contracts';
import { managerOf, queryPrepared, type Tx, type WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import { compileWhere, type TypedWhere } from '../compiler/compile-where.js';
import { Params } from '../compiler/params.js';
import type { ScopedStatement } from '../compiler/scoped-statement.js';
import { guardSql, type CollectionGuard } from '../collections/write-collections.js';
import { SideWrites } from './side-writes.js';
import { RECORD_COLUMNS, type RecordRow } from './record.types.js';

const SELECT_RECORD = `SELECT r.*, c.record_slug FROM data.records r JOIN data.collections c ON c.id = r.collection_id`;

/** A new record's row, as the create statement inserts it. */
export interface NewRecordRow {
  readonly id: string;
  readonly collectionId: string;
  /** The stored data: secret fields already sealed. */
  readonly data: Record<string, unknown>;
  readonly metadata: Record<string, unknown> | null;
  readonly status: string;
  readonly version: number;
  readonly actor: string;
  readonly expiresAt: Date | null;
}

/** What an update sets on a record's row. */
export interface RecordChange {
  readonly data: Record<string, unknown>;
  /** New metadata; null keeps the current one. */
  readonly metadata: Record<string, unknown> | null;
  readonly actor: string;
  readonly undelete: boolean;
  /** A new expiry (null clears it); undefined keeps the current one. */
  readonly expiresAt?: Date | null | undefined;
}

/**
 * data.records and the rows that belong to a record: unique values, counters,
 * and the versions, changelog entries and outbox events written with a change.
 * Every statement is confined to the scope's workspace: records by
 * `workspace_slug`, child rows by being written from (or joined to) a record
 * row of that workspace in the same statement.
 */
@Injectable()
export class RecordsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** A record of the workspace with its collection's slug; 404 RECORD_NOT_FOUND when there is none. */
  async load(
    scope: WorkspaceScope,
    id: string,
    options: { tx?: Tx; forUpdate?: boolean; includeDeleted?: boolean } = {},
  ): Promise<RecordRow> {
    const row = await this.find(scope, id, options);
    if (!row) throw StrataException.notFound(`Record ${id} not found`, ErrorCode.RECORD_NOT_FOUND);
    return row;
  }

  /** {@link load}, answering undefined instead of 404. */
  async find(
    scope: WorkspaceScope,
    id: string,
    options: { tx?: Tx; forUpdate?: boolean; includeDeleted?: boolean } = {},
  ): Promise<RecordRow | undefined> {
    const rows = await managerOf(this.db, options.tx).query<RecordRow[]>(
      `${SELECT_RECORD} WHERE r.workspace_slug = $1 AND r.id = $2${options.includeDeleted ? '' : ' AND r.deleted_at IS NULL'}${options.forUpdate ? ' FOR UPDATE OF r' : ''}`,
      [scope.workspace, id],
    );
    return rows[0];
  }

  /** Live records of a collection whose data holds every `match` value (JSON containment), locked; at most two. */
  async findByMatch(
    scope: WorkspaceScope,
    tx: Tx,
    collectionId: string,
    match: Readonly<Record<string, unknown>>,
  ): Promise<RecordRow[]> {
    return managerOf(this.db, tx).query<RecordRow[]>(
      `${SELECT_RECORD} WHERE r.workspace_slug = $1 AND r.collection_id = $2 AND r.deleted_at IS NULL
          AND r.data @> $3::jsonb
        ORDER BY r.created_at, r.id LIMIT 2 FOR UPDATE OF r`,
      [scope.workspace, collectionId, JSON.stringify(match)],
    );
  }

  /** A transaction-scoped advisory lock on a name within the workspace (serialises upserts of one match). */
  async lock(scope: WorkspaceScope, tx: Tx, name: string): Promise<void> {
    await managerOf(this.db, tx).query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `data:${scope.workspace}:${name}`,
    ]);
  }

  /**
   * Inserts a record and its side rows in one statement (`side` rows are
   * written from the inserted row). With a `guard`, the statement also confirms
   * the collection is still the revision the data was validated against and
   * inserts nothing when it is not: the answer is then undefined.
   */
  async create(
    scope: WorkspaceScope,
    tx: Tx | undefined,
    row: NewRecordRow,
    side: SideWrites,
    guard?: CollectionGuard,
  ): Promise<Pick<RecordRow, 'created_at' | 'updated_at'> | undefined> {
    const [inserted] = await side.flush<Pick<RecordRow, 'created_at' | 'updated_at'>>(this.manager(tx), {
      render: (bind) => {
        const values = [
          bind(row.id),
          bind(scope.workspace),
          guard ? 'g.id' : bind(row.collectionId),
          bind(row.data),
          bind(row.metadata),
          bind(row.status),
          bind(row.version),
          bind(row.actor),
          bind(row.actor),
          bind(row.expiresAt),
        ];
        return `INSERT INTO data.records (id, workspace_slug, collection_id, data, metadata, status, version,
                  created_by, updated_by, expires_at)
                SELECT ${values.join(', ')}${guard ? ` FROM (${guardSql(guard, bind)}) g` : ''}
                RETURNING created_at, updated_at`;
      },
    });
    return inserted;
  }

  /** Writes a new version of a record's row. */
  async update(scope: WorkspaceScope, tx: Tx, id: string, change: RecordChange): Promise<RecordRow> {
    const [updated] = await queryPrepared<RecordRow>(
      this.manager(tx),
      `UPDATE data.records SET data = $3, metadata = COALESCE($4, metadata), version = version + 1, updated_by = $5,
           updated_at = clock_timestamp(), deleted_at = CASE WHEN $6 THEN NULL ELSE deleted_at END,
           deleted_by = CASE WHEN $6 THEN NULL ELSE deleted_by END,
           expires_at = CASE WHEN $7 THEN $8::timestamptz ELSE expires_at END
         WHERE workspace_slug = $1 AND id = $2 RETURNING ${RECORD_COLUMNS}`,
      [
        scope.workspace,
        id,
        change.data,
        change.metadata,
        change.actor,
        change.undelete,
        change.expiresAt !== undefined,
        change.expiresAt ?? null,
      ],
    );
    if (!updated) throw StrataException.notFound(`Record ${id} not found`, ErrorCode.RECORD_NOT_FOUND);
    return updated;
  }

  /**
   * Writes the side rows of a change to an existing record (its version,
   * changelog entry, unique values, event) in one statement, each written from
   * the record's row in the scope's workspace: none is written when that row
   * is not there.
   */
  async writeSide(scope: WorkspaceScope, tx: Tx, recordId: string, side: SideWrites): Promise<void> {
    if (side.isEmpty()) return;
    const [head] = await side.flush<{ id: string }>(this.manager(tx), {
      render: (bind) =>
        `SELECT id FROM data.records WHERE workspace_slug = ${bind(scope.workspace)} AND id = ${bind(recordId)}`,
    });
    if (!head) throw StrataException.notFound(`Record ${recordId} not found`, ErrorCode.RECORD_NOT_FOUND);
  }

  /** Marks a record deleted (restore can bring it back), with its side rows in the same statement. */
  async softDelete(scope: WorkspaceScope, tx: Tx, id: string, actor: string, side: SideWrites): Promise<void> {
    const [deleted] = await side.flush<{ id: string }>(this.manager(tx), {
      render: (bind) =>
        `UPDATE data.records SET deleted_at = clock_timestamp(), deleted_by = ${bind(actor)}
          WHERE workspace_slug = ${bind(scope.workspace)} AND id = ${bind(id)} AND deleted_at IS NULL RETURNING id`,
    });
    if (!deleted) throw StrataException.notFound(`Record ${id} not found`, ErrorCode.RECORD_NOT_FOUND);
  }

  /** Removes a record for good (its versions, changelog and unique values go with it), with its side rows. */
  async remove(scope: WorkspaceScope, tx: Tx, id: string, side: SideWrites): Promise<void> {
    const [removed] = await side.flush<{ id: string }>(this.manager(tx), {
      render: (bind) =>
        `DELETE FROM data.records WHERE workspace_slug = ${bind(scope.workspace)} AND id = ${bind(id)} RETURNING id`,
    });
    if (!removed) throw StrataException.notFound(`Record ${id} not found`, ErrorCode.RECORD_NOT_FOUND);
  }

  /** Removes a record's unique-value rows (before its data changes or it is deleted). */
  async clearUniqueValues(scope: WorkspaceScope, tx: Tx, recordId: string): Promise<void> {
    await managerOf(this.db, tx).query(
      `DELETE FROM data.unique_values u USING data.records r
        WHERE u.record_id = $2 AND r.id = u.record_id AND r.workspace_slug = $1`,
      [scope.workspace, recordId],
    );
  }

  /** The next value of an autoIncrement field: `startAt` first, then `incrementBy` more each time. */
  async nextCounter(
    scope: WorkspaceScope,
    tx: Tx | undefined,
    collectionId: string,
    field: string,
    startAt: number,
    incrementBy: number,
  ): Promise<number> {
    const [row] = await managerOf(this.db, tx).query<{ value: string }[]>(
      `INSERT INTO data.counters (collection_id, field, last_value)
       SELECT c.id, $3, $4 FROM data.collections c WHERE c.workspace_slug = $1 AND c.id = $2
       ON CONFLICT (collection_id, field) DO UPDATE SET last_value = data.counters.last_value + $5
       RETURNING last_value AS value`,
      [scope.workspace, collectionId, field, startAt, incrementBy],
    );
    if (!row) throw StrataException.notFound(`Collection ${collectionId} not found`, ErrorCode.STRUCTURE_NOT_FOUND);
    return Number(row.value);
  }

  /** Ids of the live records of a collection whose data contains `probe`, locked for update, oldest first. */
  async referencingIds(
    scope: WorkspaceScope,
    tx: Tx,
    collectionId: string,
    probe: Readonly<Record<string, unknown>>,
  ): Promise<string[]> {
    const rows = await managerOf(this.db, tx).query<{ id: string }[]>(
      `SELECT id FROM data.records WHERE workspace_slug = $1 AND collection_id = $2 AND deleted_at IS NULL
          AND data @> $3::jsonb
        ORDER BY created_at, id FOR UPDATE`,
      [scope.workspace, collectionId, JSON.stringify(probe)],
    );
    return rows.map((r) => r.id);
  }

  /**
   * Which of `wanted` name a live record of the collection `targetSlug` (by id,
   * or by `targetField` in its data). Those records are locked FOR SHARE, so
   * that a concurrent delete waits for the referencing write and then sees it.
   */
  async existingKeys(
    scope: WorkspaceScope,
    tx: Tx | undefined,
    targetSlug: string,
    targetField: string,
    wanted: readonly string[],
  ): Promise<Set<string>> {
    const key = targetField === 'id' ? 'r.id::text' : 'r.data ->> $4';
    const rows = await managerOf(this.db, tx).query<{ key: string }[]>(
      `SELECT ${key} AS key FROM data.records r JOIN data.collections c ON c.id = r.collection_id
        WHERE r.workspace_slug = $1 AND c.workspace_slug = $1 AND c.record_slug = $2 AND c.deleted_at IS NULL
          AND r.deleted_at IS NULL AND ${key} = ANY($3::text[])
        FOR SHARE OF r`,
      targetField === 'id' ? [scope.workspace, targetSlug, wanted] : [scope.workspace, targetSlug, wanted, targetField],
    );
    return new Set(rows.map((r) => r.key));
  }

  /** Live records of `target` whose key (id or `targetField`) is one of `keys`, optionally filtered. */
  async byKeys(
    scope: WorkspaceScope,
    target: Pick<Collection, 'id'>,
    targetField: string,
    keys: readonly string[],
    filter?: TypedWhere,
  ): Promise<(RecordRow & { key: string })[]> {
    const params = new Params();
    const key = targetField === 'id' ? 'r.id::text' : `r.data ->> ${params.add(targetField)}`;
    const conditions = [
      `r.workspace_slug = ${params.add(scope.workspace)}`,
      `r.collection_id = ${params.add(target.id, 'uuid')}`,
      'r.deleted_at IS NULL',
      `${key} = ANY(${params.add(keys, 'text[]')})`,
      ...(filter ? [compileWhere(filter, params)] : []),
    ];
    return this.db.query<(RecordRow & { key: string })[]>(
      `SELECT r.*, c.record_slug, ${key} AS key FROM data.records r JOIN data.collections c ON c.id = r.collection_id
        WHERE ${conditions.join(' AND ')}`,
      params.values,
    );
  }

  /** Runs a statement compiled from a query for this same scope. */
  async run<Row>(scope: WorkspaceScope, statement: ScopedStatement): Promise<Row[]> {
    if (statement.scope.workspace !== scope.workspace) {
      throw new Error(`a statement compiled for ${statement.scope.workspace} run in the scope of ${scope.workspace}`);
    }
    return this.db.query<Row[]>(statement.sql, statement.params);
  }

  /** The data of a collection's live records, most recently changed first (schema discovery reads them). */
  async recentData(
    scope: WorkspaceScope,
    tx: Tx,
    collectionId: string,
    limit: number,
    offset: number,
  ): Promise<Record<string, unknown>[]> {
    const rows = await managerOf(this.db, tx).query<{ data: Record<string, unknown> }[]>(
      `SELECT data FROM data.records WHERE workspace_slug = $1 AND collection_id = $2 AND deleted_at IS NULL
        ORDER BY updated_at DESC, id LIMIT $3 OFFSET $4`,
      [scope.workspace, collectionId, limit, offset],
    );
    return rows.map((r) => r.data);
  }

  /**
   * Claims expired live records of every workspace for the TTL sweep, oldest
   * expiry first, skipping rows another replica holds. The sweep then works on
   * each row within its own workspace.
   */
  async claimExpired(tx: Tx, limit: number, now: Date): Promise<RecordRow[]> {
    return managerOf(this.db, tx).query<RecordRow[]>(
      `${SELECT_RECORD} WHERE r.expires_at <= $2 AND r.deleted_at IS NULL AND c.deleted_at IS NULL
        ORDER BY r.expires_at LIMIT $1 FOR UPDATE OF r SKIP LOCKED`,
      [limit, now],
    );
  }

  /** Moves a record's expiry an hour past `now` (its deletion was refused; the sweep tries again then). */
  async postponeExpiry(scope: WorkspaceScope, tx: Tx, id: string, now: Date): Promise<void> {
    await managerOf(this.db, tx).query(
      `UPDATE data.records SET expires_at = $3::timestamptz + interval '1 hour' WHERE workspace_slug = $1 AND id = $2`,
      [scope.workspace, id, now],
    );
  }

  private manager(tx: Tx | undefined): EntityManager {
    return managerOf(this.db, tx);
  }
}
