import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import {
  ErrorCode,
  type BulkRecordEventName,
  type Collection,
  type FailedRecordEvent,
  type FailedRecordEventName,
} from '@strata/contracts';
import { StrataException, type Grants } from '@strata/platform';
import { findCollection } from './collection-lookup.js';
import type { BulkCreateRequest, BulkDeleteRequest, BulkUpdateRequest } from './dto/bulk.requests.js';
import { FailureEvents } from './failure-events.js';
import { Outbox } from './outbox.js';
import { RecordPresenter } from './record-presenter.js';
import { RecordSecrets } from './record-secrets.js';
import { validateForWrite } from './record-validation.js';
import { RecordWriter } from './record-writer.js';
import type { RecordResponse, RecordRow } from './record.types.js';

/** Why one item of a bulk request was not applied. */
export interface BulkItemError {
  index: number;
  id?: string;
  error: { code: string; message: string; details?: unknown };
}

const SELECT_RECORD = `SELECT r.*, c.record_slug FROM data.records r JOIN data.collections c ON c.id = r.collection_id`;

/**
 * Many records in one request and one transaction. Each item runs inside its
 * own savepoint: an invalid item is reported in `errors` and the others are
 * applied. Bulk operations emit one aggregate event per collection and no
 * per-record events; batch creation emits one event per record.
 */
@Injectable()
export class BulkRecordsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly writer: RecordWriter,
    private readonly outbox: Outbox,
    private readonly presenter: RecordPresenter,
    private readonly secrets: RecordSecrets,
    private readonly failures: FailureEvents,
  ) {}

  async create(workspace: string, actor: string, grants: Grants, body: BulkCreateRequest, perRecordEvents: boolean) {
    requireManageFor(body.options?.skipValidation, grants);
    const event = perRecordEvents ? 'record_created_failed' : 'records_bulk_created_failed';
    let reached: Collection | undefined;
    const result = await this.failures.guard({ event, actor: { createdBy: actor } }, (reach) =>
      this.db.transaction(async (tx) => {
        const c = await findCollection(tx, workspace, { id: body.structureId }, true);
        reach(c);
        reached = c;
        const created: RecordRow[] = [];
        const errors: BulkItemError[] = [];
        for (const [index, item] of body.records.entries()) {
          const row = await attempt(tx, index, undefined, errors, async () => {
            const data = await validateForWrite(tx, c, 'create', item.data, undefined, !body.options?.skipValidation);
            return this.writer.create(tx, c, data, actor, { metadata: item.metadata, emit: perRecordEvents });
          });
          if (row) created.push(row);
        }
        if (!perRecordEvents && created.length) {
          await this.aggregate(
            tx,
            'records_bulk_created',
            c,
            created.map((r) => r.id),
            { createdBy: actor },
          );
        }
        const returnRecords = body.options?.returnRecords ?? true;
        return {
          success: errors.length === 0,
          created: created.length,
          failed: errors.length,
          records: returnRecords ? await Promise.all(created.map((r) => this.presenter.record(c, r, grants))) : [],
          errors,
        };
      }),
    );
    if (result.created === 0) await this.reportAllRefused(result.errors, reached, event, { createdBy: actor });
    return result;
  }

  /** A bulk request of which no item applied failed as a whole: one failure event says so. */
  private async reportAllRefused(
    errors: BulkItemError[],
    collection: Collection | undefined,
    event: FailedRecordEventName,
    actor: Pick<FailedRecordEvent, 'createdBy' | 'updatedBy' | 'deletedBy'>,
  ): Promise<void> {
    const first = errors[0];
    if (!first) return;
    const err = new StrataException(
      first.error.code as ErrorCode,
      `All ${errors.length} items were refused; the first: ${first.error.message}`,
    );
    await this.failures.report(err, { collection, event, actor });
  }

  async update(workspace: string, actor: string, grants: Grants, body: BulkUpdateRequest) {
    requireManageFor(body.options?.skipValidation, grants);
    const collections = new Map<string, Collection>();
    const result = await this.db.transaction(async (tx) => {
      const updated = new Map<string, RecordRow[]>();
      const results: RecordResponse[] = [];
      const errors: BulkItemError[] = [];
      for (const [index, item] of body.updates.entries()) {
        const done = await attempt(tx, index, item.id, errors, async () => {
          const row = await loadForUpdate(tx, workspace, item.id);
          const c = await this.collection(tx, collections, workspace, row.collection_id);
          const previous = this.secrets.open(c, row.id, row.data);
          const data = await validateForWrite(tx, c, 'patch', item.data, previous, !body.options?.skipValidation);
          const after = await this.writer.update(tx, c, row, data, actor, {
            action: 'update',
            emit: false,
            createVersion: body.options?.createVersions,
          });
          return { c, after };
        });
        if (!done) continue;
        updated.set(done.c.id, [...(updated.get(done.c.id) ?? []), done.after]);
        results.push(await this.presenter.record(done.c, done.after, grants));
      }
      for (const [collectionId, rows] of updated) {
        await this.aggregate(
          tx,
          'records_bulk_updated',
          collections.get(collectionId)!,
          rows.map((r) => r.id),
          {
            updatedBy: actor,
          },
        );
      }
      return { success: errors.length === 0, updated: results.length, failed: errors.length, results, errors };
    });
    if (result.updated === 0) {
      const reached = collections.values().next().value;
      await this.reportAllRefused(result.errors, reached, 'records_bulk_updated_failed', { updatedBy: actor });
    }
    return result;
  }

  async delete(workspace: string, actor: string, body: BulkDeleteRequest) {
    const collections = new Map<string, Collection>();
    const result = await this.db.transaction(async (tx) => {
      const deleted = new Map<string, string[]>();
      const errors: BulkItemError[] = [];
      for (const [index, id] of body.ids.entries()) {
        const c = await attempt(tx, index, id, errors, async () => {
          const row = await loadForUpdate(tx, workspace, id);
          const collection = await this.collection(tx, collections, workspace, row.collection_id);
          await this.writer.delete(tx, collection, row, actor, { permanent: body.permanent ?? false, emit: false });
          return collection;
        });
        if (c) deleted.set(c.id, [...(deleted.get(c.id) ?? []), id]);
      }
      for (const [collectionId, ids] of deleted) {
        await this.aggregate(tx, 'records_bulk_deleted', collections.get(collectionId)!, ids, { deletedBy: actor });
      }
      const count = [...deleted.values()].reduce((n, ids) => n + ids.length, 0);
      return { success: errors.length === 0, deleted: count, failed: errors.length, errors };
    });
    if (result.deleted === 0) {
      const reached = collections.values().next().value;
      await this.reportAllRefused(result.errors, reached, 'records_bulk_deleted_failed', { deletedBy: actor });
    }
    return result;
  }

  private async collection(
    tx: EntityManager,
    cache: Map<string, Collection>,
    workspace: string,
    id: string,
  ): Promise<Collection> {
    const known = cache.get(id);
    if (known) return known;
    const c = await findCollection(tx, workspace, { id }, true);
    cache.set(id, c);
    return c;
  }

  private async aggregate(
    tx: EntityManager,
    event: BulkRecordEventName,
    c: Collection,
    recordIds: string[],
    actor: { createdBy?: string; updatedBy?: string; deletedBy?: string },
  ): Promise<void> {
    await this.outbox.add(tx, {
      event,
      workspaceSlug: c.workspaceSlug,
      recordSlug: c.recordSlug,
      structureId: c.id,
      recordIds,
      count: recordIds.length,
      timestamp: new Date().toISOString(),
      ...actor,
      ...(event === 'records_bulk_created' ? { schemaDiscoveryMode: c.schemaDiscoveryMode } : {}),
    });
  }
}

function requireManageFor(skipValidation: boolean | undefined, grants: Grants): void {
  if (skipValidation && !grants.can('records', 'manage')) {
    throw StrataException.forbidden('options.skipValidation needs the records:manage permission');
  }
}

/**
 * Runs one item inside a savepoint. A refusal of ours (validation, conflict, not
 * found) rolls the item back and is reported; anything else fails the request.
 */
async function attempt<T>(
  tx: EntityManager,
  index: number,
  id: string | undefined,
  errors: BulkItemError[],
  work: () => Promise<T>,
): Promise<T | undefined> {
  await tx.query('SAVEPOINT bulk_item');
  try {
    const result = await work();
    await tx.query('RELEASE SAVEPOINT bulk_item');
    return result;
  } catch (err) {
    if (!(err instanceof StrataException)) throw err;
    await tx.query('ROLLBACK TO SAVEPOINT bulk_item');
    errors.push({
      index,
      ...(id ? { id } : {}),
      error: { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) },
    });
    return undefined;
  }
}

async function loadForUpdate(tx: EntityManager, workspace: string, id: string): Promise<RecordRow> {
  const rows = await tx.query<RecordRow[]>(
    `${SELECT_RECORD} WHERE r.workspace_slug = $1 AND r.id = $2 AND r.deleted_at IS NULL FOR UPDATE OF r`,
    [workspace, id],
  );
  if (!rows[0]) throw StrataException.notFound(`Record ${id} not found`, ErrorCode.RECORD_NOT_FOUND);
  return rows[0];
}
