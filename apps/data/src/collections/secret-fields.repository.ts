import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { PropertyDefinition } from '@strata/contracts';
import { managerOf, type Tx, type WorkspaceScope } from '@strata/db';
import { RecordSecrets } from '../secrets/record-secrets.js';
import { maskChanges, plainStringPaths, secretPaths, treeOf, type Changes } from '../secrets/secret-paths.js';

const BATCH = 500;

/**
 * A collection change that turns string fields secret, or secret fields plain,
 * rewrites what is stored, in the change's own transaction (the collection row is
 * locked FOR UPDATE there, so no record write runs meanwhile): values of a field
 * made secret are sealed in the records and their versions, and masked in the
 * changes of the changelog and versions; values of a secret made plain are
 * decrypted. A secret field removed, renamed or retyped leaves its envelopes where
 * they are: masked wherever they show, re-encrypted by `reencrypt`.
 */
@Injectable()
export class SecretFieldsRepository {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly secrets: RecordSecrets,
  ) {}

  async apply(
    scope: WorkspaceScope,
    within: Tx,
    collectionId: string,
    before: readonly PropertyDefinition[],
    after: readonly PropertyDefinition[],
  ): Promise<void> {
    const was = new Set(secretPaths(before));
    const turnedOn = secretPaths(after).filter((p) => !was.has(p));
    const turnedOff = plainStringPaths(after).filter((p) => was.has(p));
    if (turnedOn.length === 0 && turnedOff.length === 0) return;
    const tx: EntityManager = managerOf(this.db, within);
    const ws = scope.workspace;
    const [sealed, opened] = [treeOf(turnedOn), treeOf(turnedOff)];
    const convert = (recordId: string, data: Record<string, unknown>) =>
      this.secrets.convert(collectionId, recordId, data, opened, sealed);

    await eachBatch<{ id: string; data: Record<string, unknown> }>(
      (after) =>
        tx.query(
          `SELECT id, data FROM data.records WHERE workspace_slug = $4 AND collection_id = $1
              AND ($2::uuid IS NULL OR id > $2)
            ORDER BY id LIMIT $3 FOR UPDATE`,
          [collectionId, after?.id ?? null, BATCH, ws],
        ),
      async (row) => {
        const data = convert(row.id, row.data);
        if (data) {
          await tx.query('UPDATE data.records SET data = $2 WHERE workspace_slug = $3 AND id = $1', [row.id, data, ws]);
        }
      },
    );
    await eachBatch<{ record_id: string; version: number; data: Record<string, unknown>; changes: Changes }>(
      (after) =>
        tx.query(
          `SELECT v.record_id, v.version, v.data, v.changes FROM data.record_versions v
             JOIN data.records r ON r.id = v.record_id
            WHERE r.workspace_slug = $5 AND r.collection_id = $1
              AND ($2::uuid IS NULL OR (v.record_id, v.version) > ($2, $3))
            ORDER BY v.record_id, v.version LIMIT $4 FOR UPDATE OF v`,
          [collectionId, after?.record_id ?? null, after?.version ?? 0, BATCH, ws],
        ),
      async (row) => {
        const data = convert(row.record_id, row.data);
        const changes = maskChanges(sealed, row.changes);
        if (data || changes !== row.changes) {
          await tx.query(
            `UPDATE data.record_versions v SET data = $3, changes = $4 FROM data.records r
              WHERE r.id = v.record_id AND r.workspace_slug = $5 AND v.record_id = $1 AND v.version = $2`,
            [row.record_id, row.version, data ?? row.data, changes, ws],
          );
        }
      },
    );
    if (turnedOn.length === 0) return;
    const fields = [...sealed.keys()];
    await eachBatch<{ id: string; changes: Changes }>(
      (after) =>
        tx.query(
          `SELECT l.id, l.changes FROM data.record_changelog l JOIN data.records r ON r.id = l.record_id
            WHERE r.workspace_slug = $5 AND r.collection_id = $1 AND l.changes ?| $2::text[]
              AND ($3::uuid IS NULL OR l.id > $3)
            ORDER BY l.id LIMIT $4 FOR UPDATE OF l`,
          [collectionId, fields, after?.id ?? null, BATCH, ws],
        ),
      async (row) => {
        const changes = maskChanges(sealed, row.changes);
        if (changes !== row.changes) {
          await tx.query(
            `UPDATE data.record_changelog l SET changes = $2 FROM data.records r
              WHERE r.id = l.record_id AND r.workspace_slug = $3 AND l.id = $1`,
            [row.id, changes, ws],
          );
        }
      },
    );
  }
}

/** Every row of a keyset-paged query, a page at a time. */
async function eachBatch<Row>(
  page: (after: Row | undefined) => Promise<Row[]>,
  each: (row: Row) => Promise<void>,
): Promise<void> {
  let after: Row | undefined;
  for (;;) {
    const rows = await page(after);
    for (const row of rows) await each(row);
    if (rows.length < BATCH) return;
    after = rows.at(-1);
  }
}
