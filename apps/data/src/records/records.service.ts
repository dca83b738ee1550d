import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { ErrorCode, type Collection } from '@strata/contracts';
import { StrataException, type Grants } from '@strata/platform';
import { Issues } from '../schema/issues.js';
import { findCollection } from './collection-lookup.js';
import type {
  ChangelogQuery,
  CreateRecordRequest,
  GetRecordQuery,
  ListRecordsQuery,
  PatchRecordRequest,
  ReplaceRecordRequest,
  RestoreRecordRequest,
} from './dto/record.requests.js';
import type { WriteMode } from './record-data.js';
import { RecordPresenter } from './record-presenter.js';
import { parseExpand, RecordExpander } from './record-expander.js';
import { compileCount, compileSelect } from '../query/compile-select.js';
import { encodeCursor } from '../query/cursor.js';
import { buildListQuery } from '../query/list-request.js';
import { validateForWrite } from './record-validation.js';
import { expiryOf } from './expiry.js';
import { FailureEvents } from './failure-events.js';
import { RecordSecrets } from './record-secrets.js';
import { RecordWriter } from './record-writer.js';
import { checkReferenceTargets, hasReferences } from './reference-integrity.js';
import { WriteCollections } from './write-collections.js';
import type { RecordResponse, RecordRow } from './record.types.js';

const SELECT_RECORD = `SELECT r.*, c.record_slug FROM data.records r JOIN data.collections c ON c.id = r.collection_id`;

export interface RecordPage {
  results: RecordResponse[];
  pagination: { limit: number; offset: number; total: number | null; hasMore: boolean; nextCursor: string | null };
}

interface VersionRow {
  version: number;
  data: Record<string, unknown>;
  changes: Record<string, { old: unknown; new: unknown }>;
  updated_by: string;
  updated_at: Date;
}

/** Records of a workspace's collections: validation, storage and presentation. */
@Injectable()
export class RecordsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly writer: RecordWriter,
    private readonly secrets: RecordSecrets,
    private readonly presenter: RecordPresenter,
    private readonly expander: RecordExpander,
    private readonly failures: FailureEvents,
    private readonly collections: WriteCollections,
  ) {}

  async create(workspace: string, actor: string, grants: Grants, body: CreateRecordRequest): Promise<RecordResponse> {
    const expiresAt = expiryOf(body) ?? undefined;
    return this.failures.guard({ event: 'record_created_failed', actor: { createdBy: actor } }, (reached) =>
      this.collections.write(workspace, body.structureId, async (c, guard) => {
        reached(c);
        // A plain collection's create is one guarded statement. Reference checks lock their
        // targets and discovery records suggestions: those need the insert's transaction.
        const create = async (db: EntityManager) => {
          const data = await validateForWrite(db, c, 'create', body.data, undefined, true);
          const row = await this.writer.create(db, c, data, actor, {
            metadata: body.metadata,
            emit: true,
            expiresAt,
            guard,
          });
          return this.presenter.record(c, row, grants);
        };
        return needsTransaction(c) ? this.db.transaction(create) : create(this.db.manager);
      }),
    );
  }

  async get(workspace: string, id: string, grants: Grants, query: GetRecordQuery) {
    const paths = parseExpand(query.expand);
    const row = await this.load(this.db.manager, workspace, id);
    const c = await findCollection(this.db.manager, workspace, { id: row.collection_id });
    let response = await this.presenter.record(c, row, grants);
    if (query.version !== undefined && query.version !== row.version) {
      const version = await this.version(row.id, query.version);
      response = {
        ...response,
        version: version.version,
        data: await this.presenter.data(c, row.id, version.data, grants),
      };
    }
    if (paths.length) await this.expander.expand(c, [response.data], paths, grants);
    return {
      ...response,
      ...(query.includeHistory ? { history: (await this.history(workspace, id, grants)).versions } : {}),
      ...(query.includeChangelog ? { changelog: (await this.changelog(workspace, id, {})).entries } : {}),
    };
  }

  /**
   * The records list: filter expression and legacy parameters, sort on any
   * fields, offset or keyset cursor, COUNT only with includeCount, expand.
   */
  async list(
    workspace: string,
    grants: Grants,
    collection: { id: string } | { slug: string },
    query: ListRecordsQuery,
    legacy: Readonly<Record<string, unknown>> = {},
  ): Promise<RecordPage> {
    const paths = parseExpand(query.expand);
    const c = await findCollection(this.db.manager, workspace, collection);
    const q = buildListQuery(c, {
      filter: query.filter,
      sort: query.sort,
      limit: query.limit ?? query.pageSize,
      offset: query.offset,
      cursor: query.cursor,
      legacy,
    });
    const compiled = compileSelect({ ...q, limit: q.limit + 1 });
    const rows = await this.db.query<(RecordRow & Record<string, string>)[]>(compiled.sql, compiled.params);
    let total: number | null = null;
    if (query.includeCount) {
      const count = compileCount(q);
      const [counted] = await this.db.query<[{ n: number }]>(count.sql, count.params);
      total = counted.n;
    }
    const page = rows.slice(0, q.limit);
    const results = await Promise.all(page.map((row) => this.presenter.record(c, row, grants)));
    if (paths.length) {
      await this.expander.expand(
        c,
        results.map((r) => r.data),
        paths,
        grants,
      );
    }
    const last = page.at(-1);
    const hasMore = rows.length > q.limit;
    return {
      results,
      pagination: {
        limit: q.limit,
        offset: q.offset ?? 0,
        total,
        hasMore,
        nextCursor:
          hasMore && last
            ? encodeCursor(
                q.sortSpec,
                compiled.keyColumns.map((k) => last[k]!),
                last.id,
              )
            : null,
      },
    };
  }

  async patch(
    workspace: string,
    id: string,
    actor: string,
    grants: Grants,
    body: PatchRecordRequest,
    expectedVersion?: number,
  ) {
    if (body.options?.skipValidation && !grants.can('records', 'manage')) {
      throw StrataException.forbidden('options.skipValidation needs the records:manage permission');
    }
    return this.change(workspace, id, actor, grants, 'patch', body.data, {
      metadata: body.metadata,
      createVersion: body.options?.createVersion,
      validate: !body.options?.skipValidation,
      expectedVersion,
      expiresAt: expiryOf(body),
    });
  }

  async replace(
    workspace: string,
    id: string,
    actor: string,
    grants: Grants,
    body: ReplaceRecordRequest,
    expectedVersion?: number,
  ) {
    return this.change(workspace, id, actor, grants, 'replace', body.data, {
      metadata: body.metadata,
      validate: true,
      expectedVersion,
    });
  }

  async delete(workspace: string, id: string, actor: string, permanent: boolean, expectedVersion?: number) {
    return this.failures.guard(
      { event: 'record_deleted_failed', actor: { deletedBy: actor }, recordId: id },
      (reached) =>
        this.db.transaction(async (tx) => {
          const row = await this.load(tx, workspace, id, true);
          const c = await findCollection(tx, workspace, { id: row.collection_id }, true);
          reached(c);
          checkVersion(row, expectedVersion);
          await this.writer.delete(tx, c, row, actor, { permanent, emit: true });
          return { success: true as const, id, deletedAt: new Date().toISOString() };
        }),
    );
  }

  async history(workspace: string, id: string, grants: Grants) {
    const row = await this.load(this.db.manager, workspace, id);
    const c = await findCollection(this.db.manager, workspace, { id: row.collection_id });
    const versions = await this.db.query<VersionRow[]>(
      'SELECT * FROM data.record_versions WHERE record_id = $1 ORDER BY version',
      [id],
    );
    return {
      versions: await Promise.all(
        versions.map(async (v) => ({
          version: v.version,
          data: await this.presenter.data(c, row.id, v.data, grants),
          updatedAt: v.updated_at.toISOString(),
          updatedBy: v.updated_by,
          changes: this.presenter.changes(c, v.changes),
          ...(v.version === 1 ? { createdAt: row.created_at.toISOString() } : {}),
        })),
      ),
    };
  }

  /**
   * Writes an older version's data as a new version: `record_reverted` for a
   * live record, `record_restored` when it brings back a soft-deleted one.
   */
  async restore(workspace: string, id: string, actor: string, grants: Grants, body: RestoreRecordRequest) {
    return this.db.transaction(async (tx) => {
      const row = await this.load(tx, workspace, id, true, true);
      const c = await findCollection(tx, workspace, { id: row.collection_id }, true);
      const old = await this.version(id, body.version, tx);
      const plain = this.secrets.open(c, id, old.data);
      const deleted = row.deleted_at !== null;
      const issues = new Issues();
      await checkReferenceTargets(tx, workspace, c.properties, plain, issues);
      if (issues.count)
        throw StrataException.validation([...issues.list], 'The version names records that no longer exist');
      const updated = await this.writer.update(tx, c, row, plain, actor, {
        action: deleted ? 'restore' : 'revert',
        emit: true,
        ...(body.reason ? { metadata: { ...(row.metadata ?? {}), restoreReason: body.reason } } : {}),
        undelete: deleted,
      });
      const presented = await this.presenter.record(c, updated, grants);
      return { id, version: updated.version, restoredFrom: body.version, data: presented.data };
    });
  }

  async changelog(workspace: string, id: string, query: ChangelogQuery) {
    const record = await this.load(this.db.manager, workspace, id, false, true);
    const c = await findCollection(this.db.manager, workspace, { id: record.collection_id });
    const rows = await this.db.query<
      {
        id: string;
        record_id: string;
        action: string;
        user_id: string;
        at: Date;
        changes: Record<string, { old: unknown; new: unknown }>;
        metadata: Record<string, unknown> | null;
      }[]
    >(
      `SELECT * FROM data.record_changelog WHERE record_id = $1
         AND ($2::timestamptz IS NULL OR at >= $2) AND ($3::timestamptz IS NULL OR at <= $3)
       ORDER BY at DESC LIMIT $4`,
      [id, query.startDate ?? null, query.endDate ?? null, query.limit ?? 50],
    );
    return {
      entries: rows.map((e) => ({
        id: e.id,
        recordId: e.record_id,
        action: e.action,
        userId: e.user_id,
        // The data service knows principals by id only.
        userName: e.user_id,
        timestamp: e.at.toISOString(),
        changes: Object.fromEntries(
          Object.entries(this.presenter.changes(c, e.changes)).map(([field, change]) => [
            field,
            { field, oldValue: change.old, newValue: change.new },
          ]),
        ),
        metadata: e.metadata ?? {},
      })),
    };
  }

  private async change(
    workspace: string,
    id: string,
    actor: string,
    grants: Grants,
    mode: WriteMode,
    input: Record<string, unknown>,
    options: {
      metadata?: Record<string, unknown> | undefined;
      createVersion?: boolean | undefined;
      validate: boolean;
      expectedVersion?: number | undefined;
      expiresAt?: Date | null | undefined;
    },
  ) {
    return this.failures.guard(
      { event: 'record_updated_failed', actor: { updatedBy: actor }, recordId: id },
      (reached) =>
        this.db.transaction(async (tx) => {
          const row = await this.load(tx, workspace, id, true);
          const c = await findCollection(tx, workspace, { id: row.collection_id }, true);
          reached(c);
          checkVersion(row, options.expectedVersion);
          const previous = this.secrets.open(c, row.id, row.data);
          const data = await validateForWrite(tx, c, mode, input, previous, options.validate);
          const updated = await this.writer.update(tx, c, row, data, actor, {
            action: 'update',
            emit: true,
            createVersion: options.createVersion,
            metadata: options.metadata,
            expiresAt: options.expiresAt,
          });
          return { ...(await this.presenter.record(c, updated, grants)), previousVersion: row.version };
        }),
    );
  }

  private async load(
    db: EntityManager,
    workspace: string,
    id: string,
    forUpdate = false,
    includeDeleted = false,
  ): Promise<RecordRow> {
    const rows = await db.query<RecordRow[]>(
      `${SELECT_RECORD} WHERE r.workspace_slug = $1 AND r.id = $2${includeDeleted ? '' : ' AND r.deleted_at IS NULL'}${forUpdate ? ' FOR UPDATE OF r' : ''}`,
      [workspace, id],
    );
    if (!rows[0]) throw StrataException.notFound(`Record ${id} not found`, ErrorCode.RECORD_NOT_FOUND);
    return rows[0];
  }

  private async version(id: string, version: number, db: EntityManager = this.db.manager): Promise<VersionRow> {
    const rows = await db.query<VersionRow[]>(
      'SELECT * FROM data.record_versions WHERE record_id = $1 AND version = $2',
      [id, version],
    );
    if (!rows[0])
      throw StrataException.notFound(`Version ${version} of record ${id} not found`, ErrorCode.RECORD_NOT_FOUND);
    return rows[0];
  }
}

/** Optimistic concurrency: a caller that sent the version it read loses when the record moved on. */
/** Whether a create must run in a transaction: its reference checks lock targets, discovery writes suggestions. */
function needsTransaction(c: Collection): boolean {
  return hasReferences(c.properties) || c.schemaDiscoveryMode === 'auto-evolving';
}

function checkVersion(row: RecordRow, expected: number | undefined): void {
  if (expected !== undefined && expected !== row.version) {
    throw StrataException.conflict(
      `Record ${row.id} is at version ${row.version}, not ${expected}: read it again`,
      ErrorCode.VERSION_CONFLICT,
    );
  }
}
