import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, QueryRunner } from 'typeorm';
import type { CollectionMetadata, MigrationEvent, PropertyDefinition } from '@strata/contracts';
import { managerOf, rowsOf, type Tx, type WorkspaceScope } from '@strata/db';
import type { FieldFailure, MigratedField } from './migration-plan.js';

export type MigrationStatus = MigrationEvent['status'];
/** `scan`: every record by id; `recheck`: the records a client held locked during the scan. */
export type MigrationPhase = 'scan' | 'recheck';

export interface MigrationRow {
  id: string;
  workspace_slug: string;
  collection_id: string;
  status: MigrationStatus;
  phase: MigrationPhase;
  fields: MigratedField[];
  from_properties: PropertyDefinition[];
  to_properties: PropertyDefinition[];
  cursor: string | null;
  total: number;
  processed: number;
  converted: number;
  already_valid: number;
  failed: number;
  revert_processed: number;
  reverted: number;
  revert_failed: number;
  batches: number;
  created_by: string;
  cancelled_by: string | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  progress_event_at: Date | null;
}

/** A record's outcome in one batch. */
export interface RecordOutcome {
  readonly recordId: string;
  /** Values the job replaced (`[]`: the field was absent), for a cancel to put back. */
  readonly before?: Record<string, [] | [unknown]> | undefined;
  readonly failures?: readonly FieldFailure[] | undefined;
}

/** A record a batch holds. */
export interface LockedRecord {
  readonly id: string;
  readonly data: Record<string, unknown>;
  /** Soft-deleted: converted too (a restore brings it back), but its values are not indexed or checked against targets. */
  readonly deleted: boolean;
}

/** A listed record: why it could not be converted (or put back). */
export interface FailureRow {
  record_id: string;
  failures: FieldFailure[] | null;
  revert_failures: FieldFailure[] | null;
}

const COUNTERS = [
  'processed',
  'converted',
  'already_valid',
  'failed',
  'revert_processed',
  'reverted',
  'revert_failed',
] as const;
export type MigrationCounts = Record<(typeof COUNTERS)[number], number>;

/**
 * data.collection_migrations and data.collection_migration_records, and the statements a
 * migration batch runs on data.records. Every statement of a caller's request carries the
 * workspace; the runner works on a job it claimed, within the job's own workspace.
 */
@Injectable()
export class MigrationsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Records of a collection, deleted ones too (a restore brings them back, converted). */
  async countRecords(scope: WorkspaceScope, tx: Tx, collectionId: string): Promise<number> {
    const [row] = await managerOf(this.db, tx).query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM data.records WHERE workspace_slug = $1 AND collection_id = $2',
      [scope.workspace, collectionId],
    );
    return row?.n ?? 0;
  }

  /**
   * Of `fields`, those some record of the collection (soft-deleted ones too: they may come back)
   * holds a value for, null included: one probe per field, which stops at the first record
   * holding it (a collection that holds none is read once per field).
   */
  async heldFields(
    scope: WorkspaceScope,
    tx: Tx | undefined,
    collectionId: string,
    fields: readonly string[],
  ): Promise<Set<string>> {
    if (fields.length === 0) return new Set();
    const rows = await managerOf(this.db, tx).query<{ field: string }[]>(
      `SELECT f.field FROM unnest($3::text[]) AS f (field)
        WHERE EXISTS (SELECT 1 FROM data.records r
                       WHERE r.workspace_slug = $1 AND r.collection_id = $2 AND jsonb_exists(r.data, f.field))`,
      [scope.workspace, collectionId, fields],
    );
    return new Set(rows.map((r) => r.field));
  }

  async insert(
    scope: WorkspaceScope,
    tx: Tx,
    job: {
      id: string;
      collectionId: string;
      fields: readonly MigratedField[];
      from: readonly PropertyDefinition[];
      to: readonly PropertyDefinition[];
      total: number;
      actor: string;
      now: Date;
    },
  ): Promise<MigrationRow> {
    const [row] = await managerOf(this.db, tx).query<MigrationRow[]>(
      `INSERT INTO data.collection_migrations (id, workspace_slug, collection_id, status, fields, from_properties,
         to_properties, total, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, 'running', $4, $5, $6, $7, $8, $9, $9) RETURNING *`,
      [
        job.id,
        scope.workspace,
        job.collectionId,
        JSON.stringify(job.fields),
        JSON.stringify(job.from),
        JSON.stringify(job.to),
        job.total,
        job.actor,
        job.now,
      ],
    );
    return row!;
  }

  /** Sets the collection's metadata (a new row version: writers with a cached copy read it again). */
  async setMetadata(scope: WorkspaceScope, tx: Tx, collectionId: string, metadata: CollectionMetadata): Promise<void> {
    await managerOf(this.db, tx).query(
      'UPDATE data.collections SET metadata = $3 WHERE workspace_slug = $1 AND id = $2',
      [scope.workspace, collectionId, metadata],
    );
  }

  /** Puts a collection's properties back (a cancelled migration). */
  async setProperties(
    scope: WorkspaceScope,
    tx: Tx,
    collectionId: string,
    properties: readonly PropertyDefinition[],
    actor: string,
  ): Promise<void> {
    await managerOf(this.db, tx).query(
      `UPDATE data.collections SET properties = $3, last_updated_by = $4, updated_at = now()
        WHERE workspace_slug = $1 AND id = $2`,
      [scope.workspace, collectionId, JSON.stringify(properties), actor],
    );
  }

  async find(scope: WorkspaceScope, collectionId: string, id: string, tx?: Tx): Promise<MigrationRow | undefined> {
    const [row] = await managerOf(this.db, tx).query<MigrationRow[]>(
      `SELECT * FROM data.collection_migrations WHERE workspace_slug = $1 AND collection_id = $2 AND id = $3${tx ? ' FOR UPDATE' : ''}`,
      [scope.workspace, collectionId, id],
    );
    return row;
  }

  /** What writes need of a job: its fields, the definition it converted to, and whether (and when) it completed. */
  async conversionOf(
    scope: WorkspaceScope,
    id: string,
    tx?: Tx,
  ): Promise<Pick<MigrationRow, 'fields' | 'to_properties' | 'status' | 'finished_at'> | undefined> {
    const [row] = await managerOf(this.db, tx).query<
      Pick<MigrationRow, 'fields' | 'to_properties' | 'status' | 'finished_at'>[]
    >(
      'SELECT fields, to_properties, status, finished_at FROM data.collection_migrations WHERE workspace_slug = $1 AND id = $2',
      [scope.workspace, id],
    );
    return row;
  }

  async list(
    scope: WorkspaceScope,
    collectionId: string,
    limit: number,
    offset: number,
  ): Promise<{ rows: MigrationRow[]; total: number }> {
    const [rows, counted] = await Promise.all([
      this.db.query<MigrationRow[]>(
        `SELECT * FROM data.collection_migrations WHERE workspace_slug = $1 AND collection_id = $2
          ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`,
        [scope.workspace, collectionId, limit, offset],
      ),
      this.db.query<[{ n: number }]>(
        'SELECT count(*)::int AS n FROM data.collection_migrations WHERE workspace_slug = $1 AND collection_id = $2',
        [scope.workspace, collectionId],
      ),
    ]);
    return { rows, total: counted[0].n };
  }

  /** The job's listed records (could not convert, or not be put back), by record id. */
  async failures(
    scope: WorkspaceScope,
    id: string,
    limit: number,
    offset: number,
  ): Promise<{ rows: FailureRow[]; total: number }> {
    const where = `m.workspace_slug = $1 AND m.id = $2 AND f.migration_id = m.id
      AND (f.failures IS NOT NULL OR f.revert_failures IS NOT NULL)`;
    const [rows, counted] = await Promise.all([
      this.db.query<FailureRow[]>(
        `SELECT f.record_id, f.failures, f.revert_failures
           FROM data.collection_migration_records f, data.collection_migrations m
          WHERE ${where} ORDER BY f.record_id LIMIT $3 OFFSET $4`,
        [scope.workspace, id, limit, offset],
      ),
      this.db.query<[{ n: number }]>(
        `SELECT count(*)::int AS n FROM data.collection_migration_records f, data.collection_migrations m WHERE ${where}`,
        [scope.workspace, id],
      ),
    ]);
    return { rows, total: counted[0].n };
  }

  async pendingCount(jobId: string, tx?: Tx): Promise<number> {
    const [row] = await managerOf(this.db, tx).query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM data.collection_migration_records WHERE migration_id = $1 AND pending',
      [jobId],
    );
    return row?.n ?? 0;
  }

  /** Unfinished jobs of every workspace, oldest first (the runner claims one at a time). */
  async unfinished(): Promise<{ id: string; workspace_slug: string }[]> {
    return this.db.query(
      'SELECT id, workspace_slug FROM data.collection_migrations WHERE finished_at IS NULL ORDER BY created_at LIMIT 20',
    );
  }

  /**
   * Claims a job for this process: a session advisory lock on a connection of its own, held
   * while the job runs. The lock goes with the connection, so a runner that dies (or a
   * replica that stops) frees its job at once, for the next runner to take where it stopped.
   */
  async claim(id: string): Promise<QueryRunner | undefined> {
    const runner = this.db.createQueryRunner();
    await runner.connect();
    try {
      const [row] = rowsOf<{ claimed: boolean }>(
        await runner.query('SELECT pg_try_advisory_lock(hashtext($1)) AS claimed', [`data-migration:${id}`]),
      );
      if (row?.claimed) return runner;
    } catch (err) {
      await runner.release();
      throw err;
    }
    await runner.release();
    return undefined;
  }

  /** Gives up a claim; the connection goes back to the pool. */
  async release(id: string, runner: QueryRunner): Promise<void> {
    try {
      await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [`data-migration:${id}`]);
    } finally {
      await runner.release();
    }
  }

  /** The job, locked for the batch: a cancel waits for the batch in flight, and the batch for it. */
  async lockJob(tx: Tx, id: string): Promise<MigrationRow | undefined> {
    const [row] = await managerOf(this.db, tx).query<MigrationRow[]>(
      'SELECT * FROM data.collection_migrations WHERE id = $1 FOR UPDATE',
      [id],
    );
    return row;
  }

  /** The next record ids of the collection after `cursor`, by id, without locking them. */
  async nextIds(tx: Tx, job: MigrationRow, limit: number): Promise<string[]> {
    // Two forms, not `($3 IS NULL OR id > $3)`: the range must reach the index (records_collection_id_idx).
    const after = job.cursor === null ? '' : 'AND id > $4';
    const rows = await managerOf(this.db, tx).query<{ id: string }[]>(
      `SELECT id FROM data.records WHERE workspace_slug = $1 AND collection_id = $2 ${after} ORDER BY id LIMIT $3`,
      [job.workspace_slug, job.collection_id, limit, ...(job.cursor === null ? [] : [job.cursor])],
    );
    return rows.map((r) => r.id);
  }

  /** Records a client holds locked at the end of the scan, for the recheck. */
  async pendingIds(tx: Tx, job: MigrationRow, limit: number): Promise<string[]> {
    const rows = await managerOf(this.db, tx).query<{ record_id: string }[]>(
      `SELECT record_id FROM data.collection_migration_records WHERE migration_id = $1 AND pending
        ORDER BY record_id LIMIT $2`,
      [job.id, limit],
    );
    return rows.map((r) => r.record_id);
  }

  /**
   * Locks the records among `ids` that no one else holds (SKIP LOCKED: the job never waits
   * for a client's write, and a client waits at most for one batch), and returns their data.
   */
  async lockRecords(tx: Tx, job: MigrationRow, ids: readonly string[]): Promise<LockedRecord[]> {
    if (ids.length === 0) return [];
    return managerOf(this.db, tx).query(
      `SELECT id, data, deleted_at IS NOT NULL AS deleted FROM data.records WHERE workspace_slug = $1 AND collection_id = $2 AND id = ANY($3::uuid[])
        ORDER BY id FOR UPDATE SKIP LOCKED`,
      [job.workspace_slug, job.collection_id, ids],
    );
  }

  /** Which of `ids` are still records of the job's collection (a permanent delete takes one away). */
  async existingIds(tx: Tx, job: MigrationRow, ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await managerOf(this.db, tx).query<{ id: string }[]>(
      'SELECT id FROM data.records WHERE workspace_slug = $1 AND collection_id = $2 AND id = ANY($3::uuid[])',
      [job.workspace_slug, job.collection_id, ids],
    );
    return new Set(rows.map((r) => r.id));
  }

  /** Takes records off the pending list without an outcome (they are gone). */
  async dropPending(tx: Tx, jobId: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await managerOf(this.db, tx).query(
      `DELETE FROM data.collection_migration_records WHERE migration_id = $1 AND record_id = ANY($2::uuid[])`,
      [jobId, ids],
    );
  }

  /**
   * Writes converted data. Version, updatedAt and updatedBy stay: the values mean what they
   * meant, and a client's `If-Match` on the version it read stays valid.
   */
  async writeData(
    tx: Tx,
    job: MigrationRow,
    rows: readonly { id: string; data: Record<string, unknown> }[],
  ): Promise<void> {
    if (rows.length === 0) return;
    await managerOf(this.db, tx).query(
      `UPDATE data.records r SET data = v.data
         FROM unnest($2::uuid[], $3::jsonb[]) AS v(id, data)
        WHERE r.id = v.id AND r.workspace_slug = $1`,
      [job.workspace_slug, rows.map((r) => r.id), rows.map((r) => JSON.stringify(r.data))],
    );
  }

  async markPending(tx: Tx, jobId: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await managerOf(this.db, tx).query(
      `INSERT INTO data.collection_migration_records (migration_id, record_id, pending)
       SELECT $1, unnest($2::uuid[]), true ON CONFLICT (migration_id, record_id) DO UPDATE SET pending = true`,
      [jobId, ids],
    );
  }

  /** Stores the forward outcomes of processed records (and takes them off the pending list). */
  async saveOutcomes(
    tx: Tx,
    jobId: string,
    processed: readonly string[],
    outcomes: readonly RecordOutcome[],
  ): Promise<void> {
    const db = managerOf(this.db, tx);
    const kept = outcomes.filter((o) => (o.before && Object.keys(o.before).length) || o.failures?.length);
    if (kept.length) {
      await db.query(
        `INSERT INTO data.collection_migration_records (migration_id, record_id, pending, before, failures)
         SELECT $1, v.id, false, v.before, v.failures FROM unnest($2::uuid[], $3::jsonb[], $4::jsonb[]) AS v(id, before, failures)
         ON CONFLICT (migration_id, record_id) DO UPDATE SET pending = false, before = EXCLUDED.before, failures = EXCLUDED.failures`,
        [
          jobId,
          kept.map((o) => o.recordId),
          kept.map((o) => (o.before && Object.keys(o.before).length ? JSON.stringify(o.before) : null)),
          kept.map((o) => (o.failures?.length ? JSON.stringify(o.failures) : null)),
        ],
      );
    }
    const keptIds = new Set(kept.map((o) => o.recordId));
    const rest = processed.filter((id) => !keptIds.has(id));
    if (rest.length) {
      await db.query(
        `DELETE FROM data.collection_migration_records WHERE migration_id = $1 AND record_id = ANY($2::uuid[])
           AND before IS NULL AND failures IS NULL AND revert_failures IS NULL`,
        [jobId, rest],
      );
      await db.query(
        `UPDATE data.collection_migration_records SET pending = false WHERE migration_id = $1 AND record_id = ANY($2::uuid[]) AND pending`,
        [jobId, rest],
      );
    }
  }

  /** Stores the outcomes of a cancel's pass (records that could not be put back). */
  async saveRevertOutcomes(
    tx: Tx,
    jobId: string,
    processed: readonly string[],
    outcomes: readonly RecordOutcome[],
  ): Promise<void> {
    const db = managerOf(this.db, tx);
    const failed = outcomes.filter((o) => o.failures?.length);
    if (failed.length) {
      await db.query(
        `INSERT INTO data.collection_migration_records (migration_id, record_id, pending, revert_failures)
         SELECT $1, v.id, false, v.failures FROM unnest($2::uuid[], $3::jsonb[]) AS v(id, failures)
         ON CONFLICT (migration_id, record_id) DO UPDATE SET pending = false, revert_failures = EXCLUDED.revert_failures`,
        [jobId, failed.map((o) => o.recordId), failed.map((o) => JSON.stringify(o.failures))],
      );
    }
    const failedIds = new Set(failed.map((o) => o.recordId));
    const rest = processed.filter((id) => !failedIds.has(id));
    if (rest.length) {
      await db.query(
        `UPDATE data.collection_migration_records SET pending = false WHERE migration_id = $1 AND record_id = ANY($2::uuid[]) AND pending`,
        [jobId, rest],
      );
    }
  }

  /** The values the job replaced in these records, for a cancel. */
  async befores(tx: Tx, jobId: string, ids: readonly string[]): Promise<Map<string, Record<string, [] | [unknown]>>> {
    const rows = await managerOf(this.db, tx).query<{ record_id: string; before: Record<string, [] | [unknown]> }[]>(
      `SELECT record_id, before FROM data.collection_migration_records
        WHERE migration_id = $1 AND record_id = ANY($2::uuid[]) AND before IS NOT NULL`,
      [jobId, ids],
    );
    return new Map(rows.map((r) => [r.record_id, r.before]));
  }

  /** A cancel starts its pass from the beginning; what the scan left pending is seen by it. */
  async startRevert(tx: Tx, jobId: string, actor: string, now: Date): Promise<void> {
    const db = managerOf(this.db, tx);
    await db.query(
      `UPDATE data.collection_migrations SET status = 'cancelling', phase = 'scan', cursor = NULL, cancelled_by = $2,
          updated_at = $3 WHERE id = $1`,
      [jobId, actor, now],
    );
    await db.query(`UPDATE data.collection_migration_records SET pending = false WHERE migration_id = $1 AND pending`, [
      jobId,
    ]);
    await db.query(
      `DELETE FROM data.collection_migration_records WHERE migration_id = $1
         AND before IS NULL AND failures IS NULL AND revert_failures IS NULL`,
      [jobId],
    );
  }

  /** Which of `values` are keys (id or `targetField`) of live records of `targetSlug`; not locked. */
  async existingKeys(
    workspace: string,
    tx: Tx,
    targetSlug: string,
    targetField: string,
    values: readonly string[],
  ): Promise<Set<string>> {
    if (values.length === 0) return new Set();
    const key = targetField === 'id' ? 'r.id::text' : 'r.data ->> $4';
    const rows = await managerOf(this.db, tx).query<{ key: string }[]>(
      `SELECT ${key} AS key FROM data.records r JOIN data.collections c ON c.id = r.collection_id
        WHERE r.workspace_slug = $1 AND c.workspace_slug = $1 AND c.record_slug = $2 AND c.deleted_at IS NULL
          AND r.deleted_at IS NULL AND ${key} = ANY($3::text[])`,
      targetField === 'id' ? [workspace, targetSlug, values] : [workspace, targetSlug, values, targetField],
    );
    return new Set(rows.map((r) => r.key));
  }

  /**
   * Rebuilds the unique-value rows of one field for these records: `values` holds the value
   * each record should be indexed under (absent: none). Returns the records whose value
   * another record holds already (theirs is not indexed; the caller keeps their old value).
   */
  async replaceUniqueValues(
    tx: Tx,
    job: MigrationRow,
    field: string,
    recordIds: readonly string[],
    values: ReadonlyMap<string, string>,
  ): Promise<Set<string>> {
    const db = managerOf(this.db, tx);
    await db.query(
      `DELETE FROM data.unique_values WHERE collection_id = $1 AND field = $2 AND record_id = ANY($3::uuid[])`,
      [job.collection_id, field, recordIds],
    );
    if (values.size === 0) return new Set();
    const ids = [...values.keys()];
    const inserted = await db.query<{ record_id: string }[]>(
      `INSERT INTO data.unique_values (collection_id, field, value, record_id)
       SELECT $1, $2, v.value, v.id FROM unnest($3::uuid[], $4::text[]) AS v(id, value)
       ON CONFLICT (collection_id, field, value) DO NOTHING RETURNING record_id`,
      [job.collection_id, field, ids, ids.map((id) => values.get(id)!)],
    );
    const done = new Set(inserted.map((r) => r.record_id));
    return new Set(ids.filter((id) => !done.has(id)));
  }

  /** Indexes values again (a record's old value, once its new one was refused); a taken one is skipped. */
  async restoreUniqueValues(
    tx: Tx,
    job: MigrationRow,
    field: string,
    values: ReadonlyMap<string, string>,
  ): Promise<void> {
    if (values.size === 0) return;
    const ids = [...values.keys()];
    await managerOf(this.db, tx).query(
      `INSERT INTO data.unique_values (collection_id, field, value, record_id)
       SELECT $1, $2, v.value, v.id FROM unnest($3::uuid[], $4::text[]) AS v(id, value)
       ON CONFLICT (collection_id, field, value) DO NOTHING`,
      [job.collection_id, field, ids, ids.map((id) => values.get(id)!)],
    );
  }

  /** Saves a batch's progress with its counters, in the batch's transaction. */
  async advance(
    tx: Tx,
    job: MigrationRow,
    change: {
      cursor: string | null;
      phase: MigrationPhase;
      add: Partial<MigrationCounts>;
      now: Date;
      progressEventAt?: Date;
    },
  ): Promise<void> {
    const sets = COUNTERS.map((c, i) => `${c} = ${c} + $${i + 5}`).join(', ');
    await managerOf(this.db, tx).query(
      `UPDATE data.collection_migrations SET cursor = $2, phase = $3, updated_at = $4, batches = batches + 1, ${sets},
          progress_event_at = COALESCE($${COUNTERS.length + 5}, progress_event_at)
        WHERE id = $1`,
      [
        job.id,
        change.cursor,
        change.phase,
        change.now,
        ...COUNTERS.map((c) => change.add[c] ?? 0),
        change.progressEventAt ?? null,
      ],
    );
  }

  /**
   * Ends a job. The values kept for a cancel go (a finished job cannot be cancelled); the
   * listed records stay, for its failures list.
   */
  async finish(tx: Tx, id: string, status: MigrationStatus, now: Date, error?: string): Promise<MigrationRow> {
    await managerOf(this.db, tx).query(
      `DELETE FROM data.collection_migration_records WHERE migration_id = $1
         AND failures IS NULL AND revert_failures IS NULL`,
      [id],
    );
    const [row] = rowsOf<MigrationRow>(
      await managerOf(this.db, tx).query(
        `UPDATE data.collection_migrations SET status = $2, finished_at = $3, updated_at = $3, error = $4
          WHERE id = $1 RETURNING *`,
        [id, status, now, error ?? null],
      ),
    );
    return row!;
  }
}
