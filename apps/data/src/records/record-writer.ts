import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  DEFAULT_SCHEMA_DISCOVERY_CONFIG,
  ErrorCode,
  type Collection,
  type PropertyDefinition,
} from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import { queryPrepared } from '@strata/db';
import { StrataException } from '@strata/platform';
import { SuggestionsStore } from '../discovery/suggestions.store.js';
import { Outbox } from './outbox.js';
import { incomingReferences, referencingRecordIds } from './reference-integrity.js';
import { RecordSecrets } from './record-secrets.js';
import { diff, RECORD_COLUMNS, toEventRecord, type RecordRow } from './record.types.js';
import { FromHead, SideWrites, isoJson } from './side-writes.js';
import { CollectionChanged, guardSql, type CollectionGuard } from './write-collections.js';
import { addUniqueValues, clearUniqueValues, duplicateKeyError, uniqueFields } from './unique-values.js';

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
    private readonly secrets: RecordSecrets,
    private readonly outbox: Outbox,
    private readonly suggestions: SuggestionsStore,
  ) {}

  /**
   * Inserts a record with its side rows in one statement. With a `guard`, the
   * statement also confirms the collection is still the one `c` describes
   * (see {@link guardSql}); it then needs no transaction of its own, and
   * throws {@link CollectionChanged} when the collection moved on.
   */
  async create(
    db: EntityManager,
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
    await this.assignCounters(db, c, plain);
    if (c.schemaDiscoveryMode === 'auto-evolving') await this.observe(db, c, plain);
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
    this.logMasked(side, id, 'create', actor, changes);
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
    const [inserted] = await side
      .flush<Pick<RecordRow, 'created_at' | 'updated_at'>>(db, {
        render: (bind) => {
          const values = [
            bind(id),
            bind(c.workspaceSlug),
            options.guard ? 'g.id' : bind(c.id),
            bind(sealed),
            bind(options.metadata ?? null),
            bind(NEW_RECORD.status),
            bind(NEW_RECORD.version),
            bind(actor),
            bind(actor),
            bind(options.expiresAt ?? null),
          ];
          return `INSERT INTO data.records (id, workspace_slug, collection_id, data, metadata, status, version,
                    created_by, updated_by, expires_at)
                  SELECT ${values.join(', ')}${options.guard ? ` FROM (${guardSql(options.guard, bind)}) g` : ''}
                  RETURNING created_at, updated_at`;
        },
      })
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
    tx: EntityManager,
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
    const [updated] = await queryPrepared<RecordRow>(
      tx,
      `UPDATE data.records SET data = $2, metadata = COALESCE($3, metadata), version = version + 1, updated_by = $4,
           updated_at = clock_timestamp(), deleted_at = CASE WHEN $5 THEN NULL ELSE deleted_at END,
           deleted_by = CASE WHEN $5 THEN NULL ELSE deleted_by END,
           expires_at = CASE WHEN $6 THEN $7::timestamptz ELSE expires_at END
         WHERE id = $1 RETURNING ${RECORD_COLUMNS}`,
      [
        current.id,
        sealed,
        options.metadata ?? null,
        actor,
        options.undelete ?? false,
        options.expiresAt !== undefined,
        options.expiresAt ?? null,
      ],
    );
    const row: RecordRow = { ...updated!, record_slug: c.recordSlug };
    if (uniqueFields(c.properties).length) await clearUniqueValues(tx, current.id);
    if (c.schemaDiscoveryMode === 'auto-evolving') await this.observe(tx, c, plain);
    const side = new SideWrites();
    addUniqueValues(side, c.id, current.id, uniqueFields(c.properties), plain);
    if (c.enableVersioning || options.createVersion) this.addVersion(side, row, before, plain, sealed, c.properties);
    this.log(side, c, current.id, options.action, actor, diff(before, plain));
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
    await side.flush(tx).catch(duplicateKeyError);
    return row;
  }

  /**
   * Deletes a record after applying the onDelete rule of every reference to it:
   * restrict refuses (409, nothing changed), cascade deletes the referencing
   * records the same way, set_null clears the reference. One transaction.
   */
  async delete(
    tx: EntityManager,
    c: WriteCollection,
    current: RecordRow,
    actor: string,
    options: { permanent: boolean; emit: boolean; event?: 'record_deleted' | 'record_expired' },
  ): Promise<void> {
    await this.applyOnDelete(tx, c, current, actor, options.permanent);
    const side = new SideWrites();
    if (options.permanent) {
      await tx.query('DELETE FROM data.records WHERE id = $1', [current.id]);
    } else {
      await tx.query('UPDATE data.records SET deleted_at = clock_timestamp(), deleted_by = $2 WHERE id = $1', [
        current.id,
        actor,
      ]);
      await clearUniqueValues(tx, current.id);
      this.log(side, c, current.id, 'delete', actor, {});
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
    await side.flush(tx);
  }

  private async applyOnDelete(
    tx: EntityManager,
    c: WriteCollection,
    current: RecordRow,
    actor: string,
    permanent: boolean,
  ): Promise<void> {
    let plain: Record<string, unknown> | undefined;
    for (const ref of await incomingReferences(tx, c.workspaceSlug, c.recordSlug)) {
      const key =
        ref.property.targetField === 'id'
          ? current.id
          : (plain ??= this.secrets.open(c, current.id, current.data))[ref.property.targetField];
      if (key === undefined || key === null) continue;
      const ids = (await referencingRecordIds(tx, ref, key)).filter((id) => id !== current.id);
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
        const [row] = await tx.query<RecordRow[]>(
          `SELECT r.*, c.record_slug FROM data.records r JOIN data.collections c ON c.id = r.collection_id
            WHERE r.id = $1 AND r.deleted_at IS NULL`,
          [id],
        );
        if (!row) continue;
        if (ref.property.onDelete === 'cascade') {
          await this.delete(tx, referencing, row, actor, { permanent, emit: true });
        } else {
          const data = this.secrets.open(referencing, row.id, row.data);
          const value = data[ref.property.name];
          data[ref.property.name] = Array.isArray(value) ? value.filter((v) => v !== key) : null;
          await this.update(tx, referencing, row, data, actor, { action: 'update', emit: true });
        }
      }
    }
  }

  /** Discovery sees the write with secrets masked: a suggestion's sampleValue never holds one. */
  private async observe(tx: EntityManager, c: WriteCollection, plain: Record<string, unknown>): Promise<void> {
    await this.suggestions.observe(tx, c, this.secrets.mask(c.properties, plain));
  }

  private async assignCounters(tx: EntityManager, c: WriteCollection, plain: Record<string, unknown>): Promise<void> {
    for (const p of c.properties) {
      if (p.type !== 'number' || !p.autoIncrement) continue;
      const [{ value }] = await tx.query<[{ value: string }]>(
        `INSERT INTO data.counters (collection_id, field, last_value) VALUES ($1, $2, $3)
         ON CONFLICT (collection_id, field) DO UPDATE SET last_value = data.counters.last_value + $4
         RETURNING last_value AS value`,
        [c.id, p.name, p.autoIncrement.startAt, p.autoIncrement.incrementBy],
      );
      plain[p.name] = Number(value);
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
    side: SideWrites,
    c: WriteCollection,
    recordId: string,
    action: string,
    actor: string,
    changes: Record<string, { old: unknown; new: unknown }>,
  ): void {
    this.logMasked(side, recordId, action, actor, this.secrets.maskChanges(c.properties, changes));
  }

  /** A changelog entry whose secret fields are already masked. */
  private logMasked(
    side: SideWrites,
    recordId: string,
    action: string,
    actor: string,
    changes: Record<string, { old: unknown; new: unknown }>,
  ): void {
    side.add('data.record_changelog', { id: newUuid(), record_id: recordId, action, user_id: actor, changes });
  }
}
