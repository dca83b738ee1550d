import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { insertRows, queryPrepared, rowsOf, type WorkspaceScope } from '@strata/db';
import { Coalescer } from '../batching/coalescer.js';
import { InboundEventEntity, type DispatchStatus, type SignatureResult } from './inbound-event.entity.js';

export type NewInboundEvent = Omit<InboundEventEntity, 'workspaceSlug'>;

/** An arrival as stored, or the arrival stored before it with the same delivery id (nothing new written). */
export type Stored =
  | { readonly stored: true; readonly event: InboundEventEntity }
  | { readonly stored: false; readonly event: InboundEventEntity };

export interface InboundEventFilters {
  readonly triggerId?: string | undefined;
  readonly signatureResult?: SignatureResult | undefined;
  readonly dispatchStatus?: DispatchStatus | undefined;
  readonly since?: Date | undefined;
  readonly until?: Date | undefined;
  readonly limit: number;
  readonly offset: number;
}

/** What a dispatch attempt ended with. */
export interface DispatchChange {
  readonly status: Exclude<DispatchStatus, 'received'>;
  readonly runId?: string | null;
  readonly jobId?: string | null;
  readonly error?: string | null;
  readonly at: Date;
}

/** The columns of a list row: never the sealed body or headers. */
const LIST_COLUMNS = [
  'e.id',
  'e.workspaceSlug',
  'e.triggerId',
  'e.functionId',
  'e.sourceName',
  'e.signatureResult',
  'e.signatureScheme',
  'e.dispatchStatus',
  'e.dispatchError',
  'e.correlationId',
  'e.replayedFrom',
  'e.contentType',
  'e.bodyBytes',
  'e.runId',
  'e.persistStatus',
  'e.persistedRecordId',
  'e.persistError',
  'e.receivedAt',
  'e.dispatchedAt',
];

/**
 * Multi-row inserts up to this many rows run as prepared statements (one text
 * per size, so at most this many statements per process): PostgreSQL then does
 * not parse and plan a batch's statement again each time.
 */
const PREPARED_BATCH = 16;

/** The dispatch statuses of an arrival still to be dispatched (the sweep's list: inbound.undispatched_events). */
const UNDISPATCHED = "('received', 'queued')";

/**
 * inbound.inbound_events. Tenant methods take the scope and carry
 * `workspace_slug` in every statement; the sweeps' methods are system-wide and
 * answer each row's workspace for the sweep to act within.
 */
@Injectable()
export class InboundEventsRepository {
  /** Arrivals stored while an insert is in flight go together, in one statement (one insert in flight per replica). */
  private readonly inserts: Coalescer<null, InboundEventEntity, boolean>;

  constructor(@InjectDataSource() private readonly db: DataSource) {
    this.inserts = new Coalescer((_, rows) => this.insertAll(rows), {
      id: () => 'all',
      maxInFlight: 1,
      maxItems: 100,
      maxBytes: 4 * 1024 * 1024,
      sizeOf: (row) => row.payload.length + row.headers.length,
    });
  }

  /** Stores an arrival (with others that come meanwhile; each in its own workspace); resolves once it is written. */
  async insert(scope: WorkspaceScope, e: NewInboundEvent): Promise<Stored> {
    const row = this.db.manager.create(InboundEventEntity, { ...e, workspaceSlug: scope.workspace });
    if (await this.inserts.submit(null, row)) return { stored: true, event: row };
    // Only a delivery id already taken keeps a row out: the arrival that took it is the answer.
    const first = await this.findDelivery(scope, row.triggerId, row.deliveryId!);
    if (!first) throw new Error(`arrival ${row.id} was not stored and no arrival has its delivery id`);
    return { stored: false, event: first };
  }

  /**
   * The arrivals, and those still to dispatch in the list the sweep reads, in
   * one statement; whether each was stored (false: its delivery id was taken).
   */
  private async insertAll(rows: InboundEventEntity[]): Promise<boolean[]> {
    const inserted = insertRows('inbound.inbound_events', this.db.getMetadata(InboundEventEntity).columns, rows);
    const sql = `WITH stored AS (${inserted.sql}
        ON CONFLICT (workspace_slug, trigger_id, delivery_id) WHERE delivery_id IS NOT NULL DO NOTHING
        RETURNING id, workspace_slug, received_at, dispatch_status),
      listed AS (INSERT INTO inbound.undispatched_events (id, workspace_slug, received_at)
        SELECT id, workspace_slug, received_at FROM stored WHERE dispatch_status IN ${UNDISPATCHED})
      SELECT id FROM stored`;
    // Batches of up to PREPARED_BATCH rows (the usual sizes) as named prepared statements, one per size.
    const written =
      rows.length <= PREPARED_BATCH
        ? await queryPrepared<{ id: string }>(this.db.manager, sql, inserted.values)
        : rowsOf<{ id: string }>(await this.db.query(sql, inserted.values));
    const ids = new Set(written.map((r) => r.id));
    return rows.map((row) => ids.has(row.id));
  }

  /** The arrival of a trigger that took a delivery id. */
  async findDelivery(
    scope: WorkspaceScope,
    triggerId: string,
    deliveryId: string,
  ): Promise<InboundEventEntity | undefined> {
    const row = await this.db
      .createQueryBuilder(InboundEventEntity, 'e')
      .where('e.workspace_slug = :workspace AND e.trigger_id = :triggerId AND e.delivery_id = :deliveryId', {
        workspace: scope.workspace,
        triggerId,
        deliveryId,
      })
      .getOne();
    return row ?? undefined;
  }

  async find(scope: WorkspaceScope, id: string): Promise<InboundEventEntity | undefined> {
    const row = await this.db
      .createQueryBuilder(InboundEventEntity, 'e')
      .where('e.workspace_slug = :workspace AND e.id = :id', { workspace: scope.workspace, id })
      .getOne();
    return row ?? undefined;
  }

  async list(scope: WorkspaceScope, f: InboundEventFilters): Promise<{ rows: InboundEventEntity[]; total: number }> {
    const query = this.db
      .createQueryBuilder(InboundEventEntity, 'e')
      .select(LIST_COLUMNS)
      .where('e.workspace_slug = :workspace', { workspace: scope.workspace });
    if (f.triggerId) query.andWhere('e.trigger_id = :triggerId', { triggerId: f.triggerId });
    if (f.signatureResult) query.andWhere('e.signature_result = :sr', { sr: f.signatureResult });
    if (f.dispatchStatus) query.andWhere('e.dispatch_status = :ds', { ds: f.dispatchStatus });
    if (f.since) query.andWhere('e.received_at >= :since', { since: f.since });
    if (f.until) query.andWhere('e.received_at <= :until', { until: f.until });
    const [rows, total] = await query
      .orderBy('e.received_at', 'DESC')
      .addOrderBy('e.id', 'DESC')
      .take(f.limit)
      .skip(f.offset)
      .getManyAndCount();
    return { rows, total };
  }

  /**
   * What became of many arrivals' dispatches, in one statement. A status moves
   * only forward: `received` to anything, `queued` to `dispatched` or dropped.
   * An arrival whose dispatch ended leaves the sweep's list in the same statement.
   * No column written here is indexed: the update is HOT (migration 1765000000002).
   * Answers the arrivals it moved, with their new status.
   */
  async recordDispatches(
    scope: WorkspaceScope,
    changes: readonly { readonly id: string; readonly change: DispatchChange }[],
  ): Promise<{ id: string; status: Exclude<DispatchStatus, 'received'> }[]> {
    if (changes.length === 0) return [];
    const rows: { id: string; dispatch_status: Exclude<DispatchStatus, 'received'> }[] = await this.db.query(
      `WITH changed AS (
         UPDATE inbound.inbound_events e
            SET dispatch_status = u.status,
                run_id = COALESCE(u.run_id, e.run_id),
                job_id = COALESCE(u.job_id, e.job_id),
                dispatch_error = COALESCE(u.error, e.dispatch_error),
                dispatched_at = u.at
           FROM unnest($2::text[], $3::text[], $4::uuid[], $5::uuid[], $6::text[], $7::timestamptz[])
                AS u(id, status, run_id, job_id, error, at)
          WHERE e.workspace_slug = $1 AND e.id = u.id
            AND (e.dispatch_status = 'received' OR (e.dispatch_status = 'queued' AND u.status <> 'queued'))
         RETURNING e.id, e.dispatch_status),
       cleared AS (
         DELETE FROM inbound.undispatched_events x USING changed c
          WHERE x.workspace_slug = $1 AND x.id = c.id AND c.dispatch_status NOT IN ${UNDISPATCHED})
       SELECT id, dispatch_status FROM changed`,
      [
        scope.workspace,
        changes.map((c) => c.id),
        changes.map((c) => c.change.status),
        changes.map((c) => c.change.runId ?? null),
        changes.map((c) => c.change.jobId ?? null),
        changes.map((c) => c.change.error ?? null),
        changes.map((c) => c.change.at),
      ],
    );
    return rows.map((row) => ({ id: row.id, status: row.dispatch_status }));
  }

  /** Ids of the arrivals a bulk replay takes: matching, not rejected, oldest first. */
  async replayable(
    scope: WorkspaceScope,
    f: Pick<InboundEventFilters, 'triggerId' | 'dispatchStatus' | 'since' | 'until'> & { limit: number },
  ): Promise<string[]> {
    const query = this.db
      .createQueryBuilder(InboundEventEntity, 'e')
      .select('e.id')
      .where("e.workspace_slug = :workspace AND e.signature_result <> 'rejected'", { workspace: scope.workspace });
    if (f.triggerId) query.andWhere('e.trigger_id = :triggerId', { triggerId: f.triggerId });
    if (f.dispatchStatus) query.andWhere('e.dispatch_status = :ds', { ds: f.dispatchStatus });
    if (f.since) query.andWhere('e.received_at >= :since', { since: f.since });
    if (f.until) query.andWhere('e.received_at <= :until', { until: f.until });
    const rows = await query.orderBy('e.received_at', 'ASC').addOrderBy('e.id', 'ASC').take(f.limit).getMany();
    return rows.map((r) => r.id);
  }

  /** Takes the arrival's one auto-persist attempt (`pending` → `attempted`); whether this caller has it. */
  async takePersist(scope: WorkspaceScope, id: string): Promise<boolean> {
    const rows = rowsOf<{ id: string }>(
      await this.db.query(
        `UPDATE inbound.inbound_events SET persist_status = 'attempted'
          WHERE workspace_slug = $1 AND id = $2 AND persist_status = 'pending' RETURNING id`,
        [scope.workspace, id],
      ),
    );
    return rows.length > 0;
  }

  /** Records the auto-persist's outcome (`skipped` when the trigger no longer persists). */
  async recordPersist(
    scope: WorkspaceScope,
    id: string,
    outcome: { status: 'succeeded' | 'failed' | 'skipped'; recordId?: string; error?: string },
  ): Promise<void> {
    await this.db.query(
      `UPDATE inbound.inbound_events SET persist_status = $3, persisted_record_id = $4, persist_error = $5
        WHERE workspace_slug = $1 AND id = $2 AND persist_status = 'attempted'`,
      [scope.workspace, id, outcome.status, outcome.recordId ?? null, outcome.error ?? null],
    );
  }

  async remove(scope: WorkspaceScope, id: string): Promise<void> {
    await this.db.query(
      `WITH gone AS (DELETE FROM inbound.inbound_events WHERE workspace_slug = $1 AND id = $2 RETURNING id)
       DELETE FROM inbound.undispatched_events x USING gone g WHERE x.workspace_slug = $1 AND x.id = g.id`,
      [scope.workspace, id],
    );
  }

  /**
   * System-wide, for the sweep: arrivals still `received` (or `queued`) since
   * before `before`, oldest first, from the list of arrivals still to dispatch.
   */
  undispatched(before: Date, limit: number): Promise<InboundEventEntity[]> {
    return this.db
      .createQueryBuilder(InboundEventEntity, 'e')
      .where(
        `e.id IN (SELECT x.id FROM inbound.undispatched_events x WHERE x.received_at < :before)
         AND e.dispatch_status IN ${UNDISPATCHED} AND e.signature_result <> 'rejected'`,
        { before },
      )
      .orderBy('e.received_at', 'ASC')
      .take(limit)
      .getMany();
  }

  /** System-wide, for retention: deletes up to `limit` arrivals received before `before`; how many. */
  async deleteBefore(before: Date, limit: number): Promise<number> {
    const rows = rowsOf<{ id: string }>(
      await this.db.query(
        `WITH gone AS (
           DELETE FROM inbound.inbound_events WHERE id IN (
             SELECT id FROM inbound.inbound_events WHERE received_at < $1 ORDER BY received_at LIMIT $2
           ) RETURNING id),
         listed AS (DELETE FROM inbound.undispatched_events x USING gone g WHERE x.id = g.id)
         SELECT id FROM gone`,
        [before, limit],
      ),
    );
    return rows.length;
  }
}
