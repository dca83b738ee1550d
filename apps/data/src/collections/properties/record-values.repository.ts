import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { managerOf, type Tx, type WorkspaceScope } from '@strata/db';

/** One batch of {@link RecordValuesRepository.stripBatch}. */
export interface StrippedBatch {
  /** The last record id the batch looked at; undefined when there was none (the pass is over). */
  readonly last: string | undefined;
  /** How many records of the collection the batch looked at. */
  readonly seen: number;
  /** How many of them held a value and lost it. */
  readonly stripped: number;
}

const FIRST_ID = '00000000-0000-0000-0000-000000000000';

/**
 * The values records hold for top-level fields of their collection, for removing properties:
 * counted, and removed (with their unique-value rows). Every statement names the workspace.
 */
@Injectable()
export class RecordValuesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** How many records of the collection (soft-deleted ones too: they may come back) hold each field. */
  async holders(
    scope: WorkspaceScope,
    tx: Tx | undefined,
    collectionId: string,
    fields: readonly string[],
  ): Promise<Map<string, number>> {
    const rows = await managerOf(this.db, tx).query<{ field: string; n: number }[]>(
      `SELECT f.field, count(*)::int AS n FROM data.records r CROSS JOIN unnest($3::text[]) AS f (field)
        WHERE r.workspace_slug = $1 AND r.collection_id = $2 AND jsonb_exists(r.data, f.field)
        GROUP BY f.field`,
      [scope.workspace, collectionId, fields],
    );
    return new Map(rows.map((r) => [r.field, r.n]));
  }

  /**
   * Removes the fields from the next `limit` records of the collection after `after` (by id,
   * soft-deleted ones included), and their unique-value rows: one short statement, so record
   * writes wait for at most one batch's row locks.
   */
  async stripBatch(
    scope: WorkspaceScope,
    collectionId: string,
    fields: readonly string[],
    after: string | undefined,
    limit: number,
  ): Promise<StrippedBatch> {
    const [row] = await this.db.query<{ last: string | null; seen: number; stripped: number }[]>(
      `WITH batch AS (
          SELECT id FROM data.records
           WHERE workspace_slug = $1 AND collection_id = $2 AND id > $3::uuid
           ORDER BY id LIMIT $5),
        stripped AS (
          UPDATE data.records r SET data = r.data - $4::text[] FROM batch b
           WHERE r.id = b.id AND r.workspace_slug = $1 AND jsonb_exists_any(r.data, $4::text[])
          RETURNING r.id),
        uniques AS (
          DELETE FROM data.unique_values u USING stripped s
           WHERE u.record_id = s.id AND u.collection_id = $2 AND u.field = ANY($4::text[]))
       SELECT (SELECT id::text FROM batch ORDER BY id DESC LIMIT 1) AS last,
              (SELECT count(*)::int FROM batch) AS seen,
              (SELECT count(*)::int FROM stripped) AS stripped`,
      [scope.workspace, collectionId, after ?? FIRST_ID, fields, limit],
    );
    return { last: row?.last ?? undefined, seen: row?.seen ?? 0, stripped: row?.stripped ?? 0 };
  }

  /**
   * Removes the fields from every live record of the collection that holds one (values written
   * while the batches ran), inside the schema change's transaction; answers how many.
   */
  async stripLive(scope: WorkspaceScope, tx: Tx, collectionId: string, fields: readonly string[]): Promise<number> {
    const [row] = await managerOf(this.db, tx).query<{ n: number }[]>(
      `WITH stripped AS (
          UPDATE data.records SET data = data - $3::text[]
           WHERE workspace_slug = $1 AND collection_id = $2 AND deleted_at IS NULL
             AND jsonb_exists_any(data, $3::text[])
          RETURNING id)
       SELECT count(*)::int AS n FROM stripped`,
      [scope.workspace, collectionId, fields],
    );
    return row?.n ?? 0;
  }

  /** Whether a live record of the collection holds one of the fields. */
  async anyLiveHolder(
    scope: WorkspaceScope,
    tx: Tx,
    collectionId: string,
    fields: readonly string[],
  ): Promise<boolean> {
    const rows = await managerOf(this.db, tx).query<unknown[]>(
      `SELECT 1 FROM data.records
        WHERE workspace_slug = $1 AND collection_id = $2 AND deleted_at IS NULL AND jsonb_exists_any(data, $3::text[])
        LIMIT 1`,
      [scope.workspace, collectionId, fields],
    );
    return rows.length > 0;
  }

  /**
   * Drops up to `limit` unique-value rows of a field the collection no longer holds unique (a
   * PUT removed the property, or its uniqueness), in one short statement; answers how many.
   * The statement holds the collection row FOR SHARE and drops nothing once the collection's
   * definition makes the field unique again (a later change waits for the statement, and then
   * indexes the field's values itself), so the rows of a field added back are never touched.
   * Record writes are not held up (they do not lock the row exclusively).
   */
  async dropStaleUniqueBatch(
    scope: WorkspaceScope,
    collectionId: string,
    field: string,
    limit: number,
  ): Promise<number> {
    const [row] = await this.db.query<{ n: number }[]>(
      `WITH holder AS (
          SELECT c.id FROM data.collections c
           WHERE c.workspace_slug = $1 AND c.id = $2
             AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(c.properties) p
                              WHERE p ->> 'name' = $3 AND (p ->> 'isUnique' = 'true'
                                 OR (p ->> 'type' = 'reference' AND p ->> 'relationship' = 'one-to-one')))
           FOR SHARE),
        gone AS (
          SELECT u.value FROM data.unique_values u JOIN holder h ON u.collection_id = h.id
           WHERE u.field = $3 LIMIT $4),
        dropped AS (
          DELETE FROM data.unique_values u USING gone g
           WHERE u.collection_id = $2 AND u.field = $3 AND u.value = g.value
          RETURNING 1)
       SELECT count(*)::int AS n FROM dropped`,
      [scope.workspace, collectionId, field, limit],
    );
    return row?.n ?? 0;
  }

  /** Drops the collection's unique-value rows of the fields (the properties are going). */
  async dropUniqueValues(
    scope: WorkspaceScope,
    tx: Tx,
    collectionId: string,
    fields: readonly string[],
  ): Promise<void> {
    await managerOf(this.db, tx).query(
      `DELETE FROM data.unique_values u USING data.collections c
        WHERE c.id = u.collection_id AND c.workspace_slug = $1 AND u.collection_id = $2 AND u.field = ANY($3::text[])`,
      [scope.workspace, collectionId, fields],
    );
  }
}
