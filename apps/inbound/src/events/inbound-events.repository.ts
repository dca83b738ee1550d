import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { insertRowsWhere, queryPrepared, rowsOf, type WorkspaceScope } from '@strata/db';
import { Coalescer } from '../batching/coalescer.js';
import { InboundEventEntity, type DispatchStatus, type SignatureResult } from './inbound-event.entity.js';

export type NewInboundEvent = Omit<InboundEventEntity, 'workspaceSlug'>;

/**
 * What a verified plain HMAC arrival claims with its store (`signatureClaimOf` of
 * @strata/crypto): its signature's key on its trigger, until `expiresAt`.
 */
export interface SignatureClaim {
  readonly key: string;
  readonly expiresAt: Date;
}

/** An arrival to store, with the claim it takes (null: it takes none). */
interface Pending {
  readonly row: InboundEventEntity;
  readonly claim: SignatureClaim | null;
}

/**
 * An arrival as stored, or the arrival stored before it with the same delivery id or
 * the same signature within the claim's window (nothing new written).
 */
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
  private readonly inserts: Coalescer<null, Pending, boolean>;

  constructor(@InjectDataSource() private readonly db: DataSource) {
    this.inserts = new Coalescer((_, items) => this.insertAll(items), {
      id: () => 'all',
      maxInFlight: 1,
      maxItems: 100,
      maxBytes: 4 * 1024 * 1024,
      sizeOf: ({ row }) => row.payload.length + row.headers.length,
    });
  }

  /**
   * Stores an arrival (with others that come meanwhile; each in its own workspace);
   * resolves once it is written. With a `claim`, the arrival is stored only if it takes
   * the claim (none holds its key on the trigger, or the one that does has expired by
   * the arrival's `receivedAt`); otherwise the arrival that holds it is the answer.
   */
  async insert(scope: WorkspaceScope, e: NewInboundEvent, claim: SignatureClaim | null = null): Promise<Stored> {
    const row = this.db.manager.create(InboundEventEntity, { ...e, workspaceSlug: scope.workspace });
    for (let attempt = 1; ; attempt++) {
      if (await this.inserts.submit(null, { row, claim })) return { stored: true, event: row };
      // Only a delivery id or a signature already taken keeps a row out: the arrival that took it is the answer.
      const first = claim
        ? await this.findClaimed(scope, row.triggerId, claim.key)
        : await this.findDelivery(scope, row.triggerId, row.deliveryId!);
      if (first) return { stored: false, event: first };
      // A claim whose arrival is gone (retention shortened below the window since it was taken) holds nothing.
      if (claim && attempt === 1 && (await this.releaseOrphanClaim(scope, row.triggerId, claim.key))) continue;
      throw new Error(`arrival ${row.id} was not stored and no arrival has its delivery id or signature`);
    }
  }

  /**
   * The arrivals, their signature claims, and those still to dispatch in the list the
   * sweep reads, in one statement; whether each was stored (false: its delivery id, or
   * its signature within its window, was taken). Of arrivals claiming one key in one
   * batch, the first takes it. The claim and the arrival are written together or not
   * at all, so a claim never outlives a failed store, and a replica's copy sent at the
   * same moment waits on the claim's row and finds it taken.
   */
  private async insertAll(items: Pending[]): Promise<boolean[]> {
    const claimed = items.filter((i): i is Pending & { claim: SignatureClaim } => i.claim !== null);
    const claims = [
      claimed.map((i) => i.row.workspaceSlug),
      claimed.map((i) => i.row.triggerId),
      claimed.map((i) => i.claim.key),
      claimed.map((i) => i.row.id),
      claimed.map((i) => i.row.receivedAt),
      claimed.map((i) => i.claim.expiresAt),
    ];
    const inserted = insertRowsWhere(
      'inbound.inbound_events',
      this.db.getMetadata(InboundEventEntity).columns,
      items.map((i) => i.row),
      'NOT (v.id = ANY($4::text[])) OR v.id IN (SELECT inbound_event_id FROM claimed)',
      claims.length + 1,
    );
    const sql = `WITH claimed AS (
        INSERT INTO inbound.signature_claims AS c
               (workspace_slug, trigger_id, signature_key, inbound_event_id, claimed_at, expires_at)
        SELECT DISTINCT ON (u.workspace_slug, u.trigger_id, u.signature_key)
               u.workspace_slug, u.trigger_id, u.signature_key, u.id, u.claimed_at, u.expires_at
          FROM unnest($1::text[], $2::uuid[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[])
               WITH ORDINALITY AS u (workspace_slug, trigger_id, signature_key, id, claimed_at, expires_at, n)
         ORDER BY u.workspace_slug, u.trigger_id, u.signature_key, u.n
        ON CONFLICT (workspace_slug, trigger_id, signature_key) DO UPDATE
           SET inbound_event_id = EXCLUDED.inbound_event_id, claimed_at = EXCLUDED.claimed_at,
               expires_at = EXCLUDED.expires_at
         WHERE c.expires_at <= EXCLUDED.claimed_at
        RETURNING c.inbound_event_id),
      stored AS (${inserted.sql}
        ON CONFLICT (workspace_slug, trigger_id, delivery_id) WHERE delivery_id IS NOT NULL DO NOTHING
        RETURNING id, workspace_slug, received_at, dispatch_status),
      listed AS (INSERT INTO inbound.undispatched_events (id, workspace_slug, received_at)
        SELECT id, workspace_slug, received_at FROM stored WHERE dispatch_status IN ${UNDISPATCHED})
      SELECT id FROM stored`;
    const values = [...claims, ...inserted.values];
    // Batches of up to PREPARED_BATCH rows (the usual sizes) as named prepared statements, one per size.
    const written =
      items.length <= PREPARED_BATCH
        ? await queryPrepared<{ id: string }>(this.db.manager, sql, values)
        : rowsOf<{ id: string }>(await this.db.query(sql, values));
    const ids = new Set(written.map((r) => r.id));
    return items.map(({ row }) => ids.has(row.id));
  }

  /** The arrival that holds a signature's claim on a trigger (the claim may have expired since: it is still the first). */
  async findClaimed(scope: WorkspaceScope, triggerId: string, key: string): Promise<InboundEventEntity | undefined> {
    const row = await this.db
      .createQueryBuilder(InboundEventEntity, 'e')
      .where(
        `e.workspace_slug = :workspace AND e.id = (
           SELECT c.inbound_event_id FROM inbound.signature_claims c
            WHERE c.workspace_slug = :workspace AND c.trigger_id = :triggerId AND c.signature_key = :key)`,
        { workspace: scope.workspace, triggerId, key },
      )
      .getOne();
    return row ?? undefined;
  }

  /** Deletes a signature's claim whose arrival no longer exists; whether there was one. */
  private async releaseOrphanClaim(scope: WorkspaceScope, triggerId: string, key: string): Promise<boolean> {
    const rows = rowsOf<{ signature_key: string }>(
      await this.db.query(
        `DELETE FROM inbound.signature_claims c
          WHERE c.workspace_slug = $1 AND c.trigger_id = $2 AND c.signature_key = $3
            AND NOT EXISTS (SELECT 1 FROM inbound.inbound_events e
                             WHERE e.workspace_slug = c.workspace_slug AND e.id = c.inbound_event_id)
          RETURNING c.signature_key`,
        [scope.workspace, triggerId, key],
      ),
    );
    return rows.length > 0;
  }

  /**
   * System-wide, for the sweep: deletes up to `limit` signature claims that expired
   * before `now`, oldest first; how many. Rows another replica is deleting (or an
   * arrival is taking over) are skipped, and a claim taken over since it was read is
   * not deleted (the lock re-reads it).
   */
  async deleteExpiredClaims(now: Date, limit: number): Promise<number> {
    const rows = rowsOf<{ signature_key: string }>(
      await this.db.query(
        `DELETE FROM inbound.signature_claims c USING (
           SELECT workspace_slug, trigger_id, signature_key FROM inbound.signature_claims
            WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED) d
          WHERE c.workspace_slug = d.workspace_slug AND c.trigger_id = d.trigger_id
            AND c.signature_key = d.signature_key
          RETURNING c.signature_key`,
        [now, limit],
      ),
    );
    return rows.length;
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

  /**
   * System-wide, for retention: deletes up to `limit` arrivals received before `before`
   * (picked `FOR UPDATE SKIP LOCKED`: sweeps on several replicas share them and never wait on
   * each other or on a dispatch holding one); how many.
   */
  async deleteBefore(before: Date, limit: number): Promise<number> {
    const rows = rowsOf<{ id: string }>(
      await this.db.query(
        `WITH gone AS (
           DELETE FROM inbound.inbound_events WHERE id IN (
             SELECT id FROM inbound.inbound_events WHERE received_at < $1 ORDER BY received_at LIMIT $2
              FOR UPDATE SKIP LOCKED
           ) RETURNING id),
         listed AS (DELETE FROM inbound.undispatched_events x USING gone g WHERE x.id = g.id)
         SELECT id FROM gone`,
        [before, limit],
      ),
    );
    return rows.length;
  }
}
