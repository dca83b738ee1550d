import { Injectable } from '@nestjs/common';
import {
  ErrorCode,
  type BulkRecordEventName,
  type Collection,
  type FailedRecordEvent,
  type FailedRecordEventName,
} from '@strata/contracts';
import { Transactions, type Tx, type WorkspaceScope } from '@strata/db';
import { StrataException, type Grants } from '@strata/platform';
import { CollectionsRepository } from '../collections/collections.repository.js';
import { Outbox } from '../events/outbox.js';
import type { BulkCreateRequest, BulkDeleteRequest, BulkUpdateRequest } from './dto/bulk.requests.js';
import { FailureEvents } from './failure-events.js';
import { InactiveCollection, refuseInactive } from './inactive-collection.js';
import { RecordPresenter } from './record-presenter.js';
import { RecordSecrets } from '../secrets/record-secrets.js';
import { RecordValidator } from './record-validation.js';
import { RecordWriter } from './record-writer.js';
import { RecordsRepository } from './records.repository.js';
import type { RecordResponse, RecordRow } from './record.types.js';
import { requireCollection, requireRecordIn } from './collection-access.js';
import { bytesOf, RecordQuota } from '../usage/record-quota.js';

/** Why one item of a bulk request was not applied. */
export interface BulkItemError {
  index: number;
  id?: string;
  error: { code: string; message: string; details?: unknown };
}

/**
 * Many records in one request and one transaction. Each item runs inside its
 * own savepoint: an invalid item is reported in `errors` and the others are
 * applied. Bulk operations emit one aggregate event per collection and no
 * per-record events; batch creation emits one event per record.
 */
@Injectable()
export class BulkRecordsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly records: RecordsRepository,
    private readonly collections: CollectionsRepository,
    private readonly validator: RecordValidator,
    private readonly writer: RecordWriter,
    private readonly outbox: Outbox,
    private readonly presenter: RecordPresenter,
    private readonly secrets: RecordSecrets,
    private readonly failures: FailureEvents,
    private readonly quota: RecordQuota,
  ) {}

  async create(
    scope: WorkspaceScope,
    actor: string,
    grants: Grants,
    body: BulkCreateRequest,
    perRecordEvents: boolean,
  ) {
    if (body.options?.skipValidation && !grants.canAnywhere('records', 'manage')) {
      throw StrataException.forbidden('options.skipValidation needs the records:manage permission');
    }
    // Refused whole when the records would not all fit the plan (docs/plans.md): nothing is half-written.
    await this.quota.ensureRoom(scope, body.records.length, bytesOf(body.records.map((r) => r.data)));
    const event = perRecordEvents ? 'record_created_failed' : 'records_bulk_created_failed';
    let reached: Collection | undefined;
    const result = await this.failures.guard(scope, { event, actor: { createdBy: actor } }, (reach) =>
      this.transactions.run(async (tx) => {
        const c = await this.collections.find(scope, { id: body.structureId }, { tx, lock: true });
        requireCollection(grants, 'create', c);
        requireManageFor(body.options?.skipValidation, grants, c);
        reach(c);
        refuseInactive(c);
        reached = c;
        const created: RecordRow[] = [];
        const errors: BulkItemError[] = [];
        for (const [index, item] of body.records.entries()) {
          const row = await this.attempt(tx, index, undefined, errors, async () => {
            const skip = body.options?.skipValidation;
            const data = await this.validator.forWrite(scope, tx, c, 'create', item.data, undefined, !skip);
            return this.writer.create(scope, tx, c, data, actor, { metadata: item.metadata, emit: perRecordEvents });
          });
          if (row) created.push(row);
        }
        if (!perRecordEvents && created.length) {
          await this.aggregate(
            scope,
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
    if (result.created === 0) await this.reportAllRefused(scope, result.errors, reached, event, { createdBy: actor });
    return result;
  }

  /** A bulk request of which no item applied failed as a whole: one failure event says so. */
  private async reportAllRefused(
    scope: WorkspaceScope,
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
    await this.failures.report(scope, err, { collection, event, actor });
  }

  async update(scope: WorkspaceScope, actor: string, grants: Grants, body: BulkUpdateRequest) {
    // Held nowhere: the whole request is refused; held on some collections: each item is checked.
    if (body.options?.skipValidation && !grants.canAnywhere('records', 'manage')) {
      throw StrataException.forbidden('options.skipValidation needs the records:manage permission');
    }
    const collections = new Map<string, Collection>();
    const result = await this.transactions.run(async (tx) => {
      const updated = new Map<string, RecordRow[]>();
      const results: RecordResponse[] = [];
      const errors: BulkItemError[] = [];
      for (const [index, item] of body.updates.entries()) {
        const done = await this.attempt(tx, index, item.id, errors, async () => {
          const row = await this.records.load(scope, item.id, { tx, forUpdate: true });
          const c = await this.collection(scope, tx, collections, row, grants, 'update');
          requireManageFor(body.options?.skipValidation, grants, c);
          const previous = this.secrets.open(c, row.id, row.data);
          const skip = body.options?.skipValidation;
          const data = await this.validator.forWrite(scope, tx, c, 'patch', item.data, previous, !skip);
          const after = await this.writer.update(scope, tx, c, row, data, actor, {
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
          scope,
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
      await this.reportAllRefused(scope, result.errors, reached, 'records_bulk_updated_failed', {
        updatedBy: actor,
      });
    }
    return result;
  }

  async delete(scope: WorkspaceScope, actor: string, grants: Grants, body: BulkDeleteRequest) {
    const collections = new Map<string, Collection>();
    const result = await this.transactions.run(async (tx) => {
      const deleted = new Map<string, string[]>();
      const errors: BulkItemError[] = [];
      for (const [index, id] of body.ids.entries()) {
        const c = await this.attempt(tx, index, id, errors, async () => {
          const row = await this.records.load(scope, id, { tx, forUpdate: true });
          const collection = await this.collection(scope, tx, collections, row, grants, 'delete');
          const permanent = body.permanent ?? false;
          await this.writer.delete(scope, tx, collection, row, actor, { permanent, emit: false });
          return collection;
        });
        if (c) deleted.set(c.id, [...(deleted.get(c.id) ?? []), id]);
      }
      for (const [collectionId, ids] of deleted) {
        await this.aggregate(scope, tx, 'records_bulk_deleted', collections.get(collectionId)!, ids, {
          deletedBy: actor,
        });
      }
      const count = [...deleted.values()].reduce((n, ids) => n + ids.length, 0);
      return { success: errors.length === 0, deleted: count, failed: errors.length, errors };
    });
    if (result.deleted === 0) {
      const reached = collections.values().next().value;
      await this.reportAllRefused(scope, result.errors, reached, 'records_bulk_deleted_failed', {
        deletedBy: actor,
      });
    }
    return result;
  }

  /**
   * Runs one item inside a savepoint. A refusal of ours (validation, conflict, not
   * found) rolls the item back and is reported; anything else fails the request.
   */
  private async attempt<T>(
    tx: Tx,
    index: number,
    id: string | undefined,
    errors: BulkItemError[],
    work: () => Promise<T>,
  ): Promise<T | undefined> {
    try {
      return await this.transactions.savepoint(tx, work);
    } catch (err) {
      // An inactive collection refuses the whole request, not one item.
      if (!(err instanceof StrataException) || err instanceof InactiveCollection) throw err;
      errors.push({
        index,
        ...(id ? { id } : {}),
        error: { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) },
      });
      return undefined;
    }
  }

  /**
   * The record's collection, once the caller may do `action` on its records
   * (else the item is refused as a record that does not exist). Only such
   * collections are kept, so no failure event names one the caller cannot see.
   */
  private async collection(
    scope: WorkspaceScope,
    tx: Tx,
    cache: Map<string, Collection>,
    row: RecordRow,
    grants: Grants,
    action: 'update' | 'delete',
  ): Promise<Collection> {
    const known = cache.get(row.collection_id);
    if (known) {
      requireRecordIn(grants, action, known, row.id);
      return known;
    }
    const c = await this.collections.find(scope, { id: row.collection_id }, { tx, lock: true });
    requireRecordIn(grants, action, c, row.id);
    refuseInactive(c);
    cache.set(c.id, c);
    return c;
  }

  private async aggregate(
    scope: WorkspaceScope,
    tx: Tx,
    event: BulkRecordEventName,
    c: Collection,
    recordIds: string[],
    actor: { createdBy?: string; updatedBy?: string; deletedBy?: string },
  ): Promise<void> {
    await this.outbox.add(scope, tx, {
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

function requireManageFor(skipValidation: boolean | undefined, grants: Grants, c: Collection): void {
  if (skipValidation && !grants.canOnCollection('manage', c.recordSlug)) {
    throw StrataException.forbidden('options.skipValidation needs the records:manage permission');
  }
}
