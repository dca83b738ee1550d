import { Injectable } from '@nestjs/common';
import { ErrorCode, type Collection } from '@strata/contracts';
import { Transactions, type Tx, type WorkspaceScope } from '@strata/db';
import { Clock, StrataException, type Grants } from '@strata/platform';
import { CollectionsRepository } from '../collections/collections.repository.js';
import { WriteCollections } from '../collections/write-collections.js';
import { Issues } from '../schema/issues.js';
import type {
  ChangelogQuery,
  CreateRecordRequest,
  GetRecordQuery,
  ListRecordsQuery,
  PatchRecordRequest,
  ReplaceRecordRequest,
  RestoreRecordRequest,
} from './dto/record.requests.js';
import { expiryOf } from './expiry.js';
import { FailureEvents } from './failure-events.js';
import { buildListQuery } from './list/list-request.js';
import { RecordHistoryRepository } from './record-history.repository.js';
import type { WriteMode } from './record-data.js';
import { parseExpand, RecordExpander } from './record-expander.js';
import { RecordPages } from './record-pages.js';
import { RecordPresenter } from './record-presenter.js';
import { RecordSecrets } from '../secrets/record-secrets.js';
import { RecordValidator } from './record-validation.js';
import { RecordWriter } from './record-writer.js';
import { refuseInactive } from './inactive-collection.js';
import { checkReferenceTargets, hasReferences } from './reference-integrity.js';
import { requireCollection, requireRecordIn } from './collection-access.js';
import { RecordsRepository } from './records.repository.js';
import type { RecordResponse, RecordRow } from './record.types.js';
import { bytesOf, RecordQuota } from '../usage/record-quota.js';

export interface RecordListPage {
  results: RecordResponse[];
  pagination: { limit: number; offset: number; total: number | null; hasMore: boolean; nextCursor: string | null };
}

/** Records of a workspace's collections: validation, storage and presentation. */
@Injectable()
export class RecordsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly records: RecordsRepository,
    private readonly history: RecordHistoryRepository,
    private readonly collections: CollectionsRepository,
    private readonly writeCollections: WriteCollections,
    private readonly writer: RecordWriter,
    private readonly validator: RecordValidator,
    private readonly secrets: RecordSecrets,
    private readonly presenter: RecordPresenter,
    private readonly expander: RecordExpander,
    private readonly pages: RecordPages,
    private readonly failures: FailureEvents,
    private readonly clock: Clock,
    private readonly quota: RecordQuota,
  ) {}

  async create(
    scope: WorkspaceScope,
    actor: string,
    grants: Grants,
    body: CreateRecordRequest,
  ): Promise<RecordResponse> {
    const expiresAt = expiryOf(body, this.clock.now().getTime()) ?? undefined;
    await this.quota.ensureRoom(scope, 1, bytesOf([body.data]));
    return this.failures.guard(scope, { event: 'record_created_failed', actor: { createdBy: actor } }, (reached) =>
      this.writeCollections.write(scope, body.structureId, async (c, guard) => {
        requireCollection(grants, 'create', c);
        reached(c);
        refuseInactive(c);
        // A plain collection's create is one guarded statement. Reference checks lock their
        // targets and discovery records suggestions: those need the insert's transaction.
        const create = async (tx: Tx | undefined) => {
          const data = await this.validator.forWrite(scope, tx, c, 'create', body.data, undefined, true);
          const row = await this.writer.create(scope, tx, c, data, actor, {
            metadata: body.metadata,
            emit: true,
            expiresAt,
            guard,
          });
          return this.presenter.record(c, row, grants);
        };
        return needsTransaction(c) ? this.transactions.run(create) : create(undefined);
      }),
    );
  }

  async get(scope: WorkspaceScope, id: string, grants: Grants, query: GetRecordQuery) {
    const paths = parseExpand(query.expand);
    const row = await this.records.load(scope, id);
    const c = await this.collections.find(scope, { id: row.collection_id });
    requireRecordIn(grants, 'retrieve', c, id);
    let response = await this.presenter.record(c, row, grants);
    if (query.version !== undefined && query.version !== row.version) {
      const version = await this.history.version(scope, row.id, query.version);
      // That version as it was written: its data, its time and its actor (createdAt and
      // createdBy are the record's, the same in every version).
      response = {
        ...response,
        version: version.version,
        data: await this.presenter.data(c, row.id, version.data, grants),
        updatedAt: version.updated_at.toISOString(),
        updatedBy: version.updated_by,
      };
    }
    if (paths.length) await this.expander.expand(scope, c, [response.data], paths, grants);
    return {
      ...response,
      ...(query.includeHistory ? { history: (await this.versions(scope, id, grants)).versions } : {}),
      ...(query.includeChangelog ? { changelog: (await this.changelog(scope, id, grants, {})).entries } : {}),
    };
  }

  /**
   * The records list: filter expression and legacy parameters, sort on any
   * fields, offset or keyset cursor, COUNT only with includeCount, expand.
   */
  async list(
    scope: WorkspaceScope,
    grants: Grants,
    collection: { id: string } | { slug: string },
    query: ListRecordsQuery,
    legacy: Readonly<Record<string, unknown>> = {},
  ): Promise<RecordListPage> {
    const paths = parseExpand(query.expand);
    const c = await this.collections.find(scope, collection);
    requireCollection(grants, 'list', c, collection);
    const q = buildListQuery(scope, c, {
      filter: query.filter,
      sort: query.sort,
      limit: query.limit ?? query.pageSize,
      offset: query.offset,
      cursor: query.cursor,
      legacy,
    });
    const page = await this.pages.page(scope, {
      collection: c,
      query: q,
      sortSpec: q.sortSpec,
      includeCount: query.includeCount,
      expand: { paths },
      grants,
    });
    return {
      results: page.records,
      pagination: {
        limit: q.limit,
        offset: q.offset ?? 0,
        total: page.total ?? null,
        hasMore: page.hasMore,
        nextCursor: page.nextCursor,
      },
    };
  }

  async patch(
    scope: WorkspaceScope,
    id: string,
    actor: string,
    grants: Grants,
    body: PatchRecordRequest,
    expectedVersion?: number,
  ) {
    if (body.options?.skipValidation && !grants.canAnywhere('records', 'manage')) {
      throw StrataException.forbidden('options.skipValidation needs the records:manage permission');
    }
    return this.change(scope, id, actor, grants, 'patch', body.data, {
      metadata: body.metadata,
      createVersion: body.options?.createVersion,
      validate: !body.options?.skipValidation,
      expectedVersion,
      expiresAt: expiryOf(body, this.clock.now().getTime()),
    });
  }

  async replace(
    scope: WorkspaceScope,
    id: string,
    actor: string,
    grants: Grants,
    body: ReplaceRecordRequest,
    expectedVersion?: number,
  ) {
    return this.change(scope, id, actor, grants, 'replace', body.data, {
      metadata: body.metadata,
      validate: true,
      expectedVersion,
    });
  }

  async delete(
    scope: WorkspaceScope,
    id: string,
    actor: string,
    grants: Grants,
    permanent: boolean,
    expectedVersion?: number,
  ) {
    return this.failures.guard(
      scope,
      { event: 'record_deleted_failed', actor: { deletedBy: actor }, recordId: id },
      (reached) =>
        this.transactions.run(async (tx) => {
          const row = await this.records.load(scope, id, { tx, forUpdate: true });
          const c = await this.collections.find(scope, { id: row.collection_id }, { tx, lock: true });
          requireRecordIn(grants, 'delete', c, id);
          reached(c);
          refuseInactive(c);
          checkVersion(row, expectedVersion);
          await this.writer.delete(scope, tx, c, row, actor, { permanent, emit: true });
          return { success: true as const, id, deletedAt: new Date().toISOString() };
        }),
    );
  }

  /** `GET /records/{id}/history`: every stored version, secrets shown as the caller may see them. */
  async versions(scope: WorkspaceScope, id: string, grants: Grants) {
    const row = await this.records.load(scope, id);
    const c = await this.collections.find(scope, { id: row.collection_id });
    requireRecordIn(grants, 'retrieve', c, id);
    const versions = await this.history.versions(scope, id);
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
  async restore(scope: WorkspaceScope, id: string, actor: string, grants: Grants, body: RestoreRecordRequest) {
    return this.transactions.run(async (tx) => {
      const row = await this.records.load(scope, id, { tx, forUpdate: true, includeDeleted: true });
      const c = await this.collections.find(scope, { id: row.collection_id }, { tx, lock: true });
      requireRecordIn(grants, 'update', c, id);
      refuseInactive(c);
      const old = await this.history.version(scope, id, body.version, tx);
      const plain = this.secrets.open(c, id, old.data);
      const deleted = row.deleted_at !== null;
      const issues = new Issues();
      await checkReferenceTargets(this.records, scope, tx, c.properties, plain, issues);
      if (issues.count)
        throw StrataException.validation([...issues.list], 'The version names records that no longer exist');
      const updated = await this.writer.update(scope, tx, c, row, plain, actor, {
        action: deleted ? 'restore' : 'revert',
        emit: true,
        ...(body.reason ? { metadata: { ...(row.metadata ?? {}), restoreReason: body.reason } } : {}),
        undelete: deleted,
      });
      const presented = await this.presenter.record(c, updated, grants);
      return { id, version: updated.version, restoredFrom: body.version, data: presented.data };
    });
  }

  async changelog(scope: WorkspaceScope, id: string, grants: Grants, query: ChangelogQuery) {
    const record = await this.records.load(scope, id, { includeDeleted: true });
    const c = await this.collections.find(scope, { id: record.collection_id });
    requireRecordIn(grants, 'retrieve', c, id);
    const rows = await this.history.changelog(scope, id, {
      startDate: query.startDate,
      endDate: query.endDate,
      limit: query.limit ?? 50,
    });
    return {
      entries: rows.map((e) => ({
        id: e.id,
        recordId: e.record_id,
        action: e.action,
        userId: e.user_id,
        // The name at the time of the change; entries written before names were kept have the id.
        userName: e.user_name ?? e.user_id,
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
    scope: WorkspaceScope,
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
      scope,
      { event: 'record_updated_failed', actor: { updatedBy: actor }, recordId: id },
      (reached) =>
        this.transactions.run(async (tx) => {
          const row = await this.records.load(scope, id, { tx, forUpdate: true });
          const c = await this.collections.find(scope, { id: row.collection_id }, { tx, lock: true });
          requireRecordIn(grants, 'update', c, id);
          if (!options.validate && !grants.canOnCollection('manage', c.recordSlug)) {
            throw StrataException.forbidden('options.skipValidation needs the records:manage permission');
          }
          reached(c);
          refuseInactive(c);
          checkVersion(row, options.expectedVersion);
          const previous = this.secrets.open(c, row.id, row.data);
          const data = await this.validator.forWrite(scope, tx, c, mode, input, previous, options.validate);
          const updated = await this.writer.update(scope, tx, c, row, data, actor, {
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
}

/** Whether a create must run in a transaction: its reference checks lock targets, discovery writes suggestions. */
function needsTransaction(c: Collection): boolean {
  return hasReferences(c.properties) || c.schemaDiscoveryMode === 'auto-evolving';
}

/** Optimistic concurrency: a caller that sent the version it read loses when the record moved on. */
function checkVersion(row: RecordRow, expected: number | undefined): void {
  if (expected !== undefined && expected !== row.version) {
    throw StrataException.conflict(
      `Record ${row.id} is at version ${row.version}, not ${expected}: read it again`,
      ErrorCode.VERSION_CONFLICT,
    );
  }
}
