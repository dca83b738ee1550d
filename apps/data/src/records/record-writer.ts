import { Injectable } from '@nestjs/common';
import {
  DEFAULT_SCHEMA_DISCOVERY_CONFIG,
  ErrorCode,
  type Collection,
  type PropertyDefinition,
} from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import type { Tx, WorkspaceScope } from '@strata/db';
import { PrincipalNames, StrataException } from '@strata/platform';
import { CollectionsRepository } from '../collections/collections.repository.js';
import { SuggestionsRepository } from '../collections/suggestions/suggestions.repository.js';
import { CollectionChanged, type CollectionGuard } from '../collections/write-collections.js';
import { Outbox } from '../events/outbox.js';
import { own } from '../schema/issues.js';
import { RecordSecrets } from '../secrets/record-secrets.js';
import { diff, toEventRecord, type RecordRow } from './record.types.js';
import { RecordsRepository } from './records.repository.js';
import { FromHead, SideWrites, isoJson } from './side-writes.js';
import { addUniqueValues, duplicateKeyError, uniqueFields } from './unique-values.js';

/** The parts of a collection a write needs. */
export type WriteCollection = Pick<
  Collection,
  | 'id'
  | 'workspaceSlug'
  | 'recordSlug'
  | 'properties'
  | 'enableVersioning'
  | 'schemaDiscoveryMode'
  | 'schemaDiscoveryConfig'
>;

export type UpdateAction = 'update' | 'restore' | 'revert';

/** What a new record starts as; the insert sets them explicitly so that its event can say them without reading the row. */
const NEW_RECORD = { status: 'active', version: 1 } as const;

/** A record_created payload with the inserted row's timestamps (the statement's head `r`) in place. */
function stampCreated(payload: string): string {
  const created = isoJson('r.created_at');
  return `jsonb_set(jsonb_set(jsonb_set(${payload}::jsonb, '{data,createdAt}', ${created}),
            '{data,updatedAt}', ${isoJson('r.updated_at')}), '{timestamp}', ${created})`;
}

const UPDATE_EVENTS = {
  update: 'record_updated',
  restore: 'record_restored',
  revert: 'record_reverted',
} as const satisfies Record<UpdateAction, string>;

/**
 * The storage side of record writes, inside the caller's transaction: rows,
 * versions, changelog, unique values, counters, reference rules on delete,
 * and the outbox event of each change. Data arrives validated and in plaintext;
 * secret fields are sealed here and masked in events.
 */
@Injectable()
export class RecordWriter {
  constructor(
    private readonly records: RecordsRepository,
    private readonly collections: CollectionsRepository,
    private readonly secrets: RecordSecrets,
    private readonly outbox: Outbox,
    private readonly suggestions: SuggestionsRepository,
    private readonly names: PrincipalNames,
  ) {}

  /**
   * Inserts a record with its side rows in one statement. With a `guard`, the
   * statement also confirms the collection is still the one `c` describes
   * (see {@link guardSql}); it then needs no transaction of its own, and
   * throws {@link CollectionChanged} when the collection moved on.
   */
  async create(
    scope: WorkspaceScope,
    tx: Tx | undefined,
    c: WriteCollection,
    plain: Record<string, unknown>,
    actor: string,
    options: {
      metadata?: Record<string, unknown> | undefined;
      emit: boolean;
      expiresAt?: Date | undefined;
      guard?: CollectionGuard | undefined;
    },
  ): Promise<RecordRow> {
    await this.assignCounters(scope, tx, c, plain);
    if (c.schemaDiscoveryMode === 'auto-evolving') await this.observe(scope, tx, c, plain);
    const id = newUuid();
    const sealed = this.secrets.seal(c, id, plain);
    const side = new SideWrites();
    const changes = this.secrets.maskChanges(c.properties, diff({}, plain));
    addUniqueValues(side, c.id, id, uniqueFields(c.properties), plain);
    if (c.enableVersioning) {
      side.add('data.record_versions', {
        record_id: id,
        version: 1,
        data: sealed,
        changes,
        updated_by: actor,
        updated_at: new FromHead(() => 'r.updated_at'),
      });
    }
    this.logMasked(scope, side, id, 'create', actor, changes);
    if (options.emit) {
      const event = this.outbox.row({
        event: 'record_created',
        workspaceSlug: c.workspaceSlug,
        recordSlug: c.recordSlug,
        recordId: id,
        // The timestamps are the row's own, filled in by the statement below.
        data: {
          id,
          workspaceSlug: c.workspaceSlug,
          recordSlug: c.recordSlug,
          data: this.secrets.mask(c.properties, plain),
          status: NEW_RECORD.status,
          version: NEW_RECORD.version,
          createdAt: '',
          updatedAt: '',
          createdBy: actor,
          updatedBy: actor,
        },
        timestamp: '',
        createdBy: actor,
      });
      side.add('data.outbox', { ...event, payload: new FromHead((bind) => stampCreated(bind(event.payload))) });
    }
    // The row is what was sent; only its timestamps come back.
    const inserted = await this.records
      .create(
        scope,
        tx,
        {
          id,
          collectionId: c.id,
          data: sealed,
          metadata: options.metadata ?? null,
          ...NEW_RECORD,
          actor,
          expiresAt: options.expiresAt ?? null,
        },
        side,
        options.guard,
      )
      .catch(duplicateKeyError);
    if (!inserted) throw new CollectionChanged(c.id);
    return {
      id,
      workspace_slug: c.workspaceSlug,
      collection_id: c.id,
      record_slug: c.recordSlug,
      data: sealed,
      metadata: options.metadata ?? null,
      ...NEW_RECORD,
      created_by: actor,
      updated_by: actor,
      created_at: inserted.created_at,
      updated_at: inserted.updated_at,
      deleted_at: null,
      deleted_by: null,
      expires_at: options.expiresAt ?? null,
    };
  }

  async update(
    scope: WorkspaceScope,
    tx: Tx,
    c: WriteCollection,
    current: RecordRow,
    plain: Record<string, unknown>,
    actor: string,
    options: {
      action: UpdateAction;
      emit: boolean;
      createVersion?: boolean | undefined;
      metadata?: Record<string, unknown> | undefined;
      undelete?: boolean;
      /** A new expiry, null to clear it; undefined keeps the current one. */
      expiresAt?: Date | null | undefined;
    },
  ): Promise<RecordRow> {
    const before = this.secrets.open(c, current.id, current.data);
    const sealed = this.secrets.seal(c, current.id, plain);
    const updated = await this.records.update(scope, tx, current.id, {
      data: sealed,
      metadata: options.metadata ?? null,
      actor,
      undelete: options.undelete ?? false,
      expiresAt: options.expiresAt,
    });
    const row: RecordRow = { ...updated, record_slug: c.recordSlug };
    if (uniqueFields(c.properties).length) await this.records.clearUniqueValues(scope, tx, current.id);
    if (c.schemaDiscoveryMode === 'auto-evolving') await this.observe(scope, tx, c, plain);
    const side = new SideWrites();
    addUniqueValues(side, c.id, current.id, uniqueFields(c.properties), plain);
    if (c.enableVersioning || options.createVersion) this.addVersion(side, row, before, plain, sealed, c.properties);
    this.log(scope, side, c, current.id, options.action, actor, diff(before, plain));
    if (options.emit) {
      side.add(
        'data.outbox',
        this.outbox.row({
          event: UPDATE_EVENTS[options.action],
          workspaceSlug: c.workspaceSlug,
          recordSlug: c.recordSlug,
          recordId: current.id,
          data: {
            before: toEventRecord(current, this.secrets.mask(c.properties, before)),
            after: toEventRecord(row, this.secrets.mask(c.properties, plain)),
          },
          timestamp: row.updated_at.toISOString(),
          updatedBy: actor,
        }),
      );
    }
    await this.records.writeSide(scope, tx, current.id, side).catch(duplicateKeyError);
    return row;
  }

  /**
   * Deletes a record after applying the onDelete rule of every reference to it:
   * restrict refuses (409, nothing changed), cascade deletes the referencing
   * records the same way, set_null clears the reference. One transaction.
   */
  async delete(
    scope: WorkspaceScope,
    tx: Tx,
    c: WriteCollection,
    current: RecordRow,
    actor: string,
    options: { permanent: boolean; emit: boolean; event?: 'record_deleted' | 'record_expired' },
  ): Promise<void> {
    await this.applyOnDelete(scope, tx, c, current, actor, options.permanent);
    const side = new SideWrites();
    if (!options.permanent) {
      await this.records.clearUniqueValues(scope, tx, current.id);
      this.log(scope, side, c, current.id, 'delete', actor, {});
    }
    if (options.emit) {
      side.add(
        'data.outbox',
        this.outbox.row({
          event: options.event ?? 'record_deleted',
          workspaceSlug: c.workspaceSlug,
          recordSlug: c.recordSlug,
          recordId: current.id,
          // Masked from the stored data: nothing to decrypt.
          data: toEventRecord(current, this.secrets.mask(c.properties, current.data)),
          timestamp: new Date().toISOString(),
          deletedBy: actor,
        }),
      );
    }
    if (options.permanent) await this.records.remove(scope, tx, current.id, side);
    else await this.records.softDelete(scope, tx, current.id, actor, side);
  }

  private async applyOnDelete(
    scope: WorkspaceScope,
    tx: Tx,
    c: WriteCollection,
    current: RecordRow,
    actor: string,
    permanent: boolean,
  ): Promise<void> {
    let plain: Record<string, unknown> | undefined;
    for (const ref of await this.collections.incomingReferences(scope, tx, c.recordSlug)) {
      const key =
        ref.property.targetField === 'id'
          ? current.id
          : own((plain ??= this.secrets.open(c, current.id, current.data)), ref.property.targetField);
      if (key === undefined || key === null) continue;
      const probe =
        ref.property.relationship === 'many-to-many' ? { [ref.property.name]: [key] } : { [ref.property.name]: key };
      const ids = (await this.records.referencingIds(scope, tx, ref.collectionId, probe)).filter(
        (id) => id !== current.id,
      );
      if (ids.length === 0) continue;
      const referencing: WriteCollection = {
        id: ref.collectionId,
        workspaceSlug: c.workspaceSlug,
        recordSlug: ref.recordSlug,
        properties: ref.properties,
        enableVersioning: ref.enableVersioning,
        // set_null and cascade never add fields: discovery has nothing to see here.
        schemaDiscoveryMode: 'strict',
        schemaDiscoveryConfig: DEFAULT_SCHEMA_DISCOVERY_CONFIG,
      };
      if (ref.property.onDelete === 'restrict') {
        throw StrataException.conflict(
          `Record ${current.id} is referenced by ${ids.length} record(s) of ${ref.recordSlug}.${ref.property.name} (onDelete: restrict)`,
          ErrorCode.CONFLICT,
        );
      }
      for (const id of ids) {
        // Read each row again: a cascade earlier in this loop may already have changed or deleted it.
        const row = await this.records.find(scope, id, { tx });
        if (!row) continue;
        if (ref.property.onDelete === 'cascade') {
          await this.delete(scope, tx, referencing, row, actor, { permanent, emit: true });
        } else {
          const data = this.secrets.open(referencing, row.id, row.data);
          const value = own(data, ref.property.name);
          data[ref.property.name] = Array.isArray(value) ? value.filter((v) => v !== key) : null;
          await this.update(scope, tx, referencing, row, data, actor, { action: 'update', emit: true });
        }
      }
    }
  }

  /** Discovery sees the write with secrets masked: a suggestion's sampleValue never holds one. */
  private async observe(
    scope: WorkspaceScope,
    tx: Tx | undefined,
    c: WriteCollection,
    plain: Record<string, unknown>,
  ): Promise<void> {
    await this.suggestions.observe(scope, tx, c, this.secrets.mask(c.properties, plain));
  }

  private async assignCounters(
    scope: WorkspaceScope,
    tx: Tx | undefined,
    c: WriteCollection,
    plain: Record<string, unknown>,
  ): Promise<void> {
    for (const p of c.properties) {
      if (p.type !== 'number' || !p.autoIncrement) continue;
      const { startAt, incrementBy } = p.autoIncrement;
      plain[p.name] = await this.records.nextCounter(scope, tx, c.id, p.name, startAt, incrementBy);
    }
  }

  private addVersion(
    side: SideWrites,
    row: RecordRow,
    before: Record<string, unknown>,
    after: Record<string, unknown>,
    sealed: Record<string, unknown>,
    properties: readonly PropertyDefinition[],
  ): void {
    side.add('data.record_versions', {
      record_id: row.id,
      version: row.version,
      data: sealed,
      changes: this.secrets.maskChanges(properties, diff(before, after)),
      updated_by: row.updated_by,
      updated_at: row.updated_at,
    });
  }

  private log(
    scope: WorkspaceScope,
    side: SideWrites,
    c: WriteCollection,
    recordId: string,
    action: string,
    actor: string,
    changes: Record<string, { old: unknown; new: unknown }>,
  ): void {
    this.logMasked(scope, side, recordId, action, actor, this.secrets.maskChanges(c.properties, changes));
  }

  /** A changelog entry whose secret fields are already masked. */
  private logMasked(
    scope: WorkspaceScope,
    side: SideWrites,
    recordId: string,
    action: string,
    actor: string,
    changes: Record<string, { old: unknown; new: unknown }>,
  ): void {
    side.add('data.record_changelog', {
      id: newUuid(),
      record_id: recordId,
      action,
      user_id: actor,
      // The actor's name as the permission lookup gave it for this request: the name at the
      // time of the change (null for work without a caller, such as TTL expiry).
      user_name: this.names.nameOf(scope, actor) ?? null,
      changes,
    });
  }
}
