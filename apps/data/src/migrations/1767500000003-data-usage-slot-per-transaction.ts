import type { MigrationInterface, QueryRunner } from 'typeorm';

const SLOTS = 16;

/** The statement that adds one statement's changes (per workspace: live records, data bytes) to the counters. */
const apply = (slot: string, changes: string) => `
  INSERT INTO data.usage_counters AS c (workspace_slug, slot, records, storage_bytes)
  SELECT workspace_slug, ${slot}, sum(records), sum(bytes)
    FROM (${changes}) d
   GROUP BY workspace_slug
  HAVING sum(records) <> 0 OR sum(bytes) <> 0
  ON CONFLICT (workspace_slug, slot) DO UPDATE
    SET records = c.records + EXCLUDED.records, storage_bytes = c.storage_bytes + EXCLUDED.storage_bytes;`;

const sized = (table: string, sign: string) =>
  `SELECT workspace_slug, ${sign}count(*) FILTER (WHERE deleted_at IS NULL) AS records,
          ${sign}coalesce(sum(pg_column_size(data)), 0) AS bytes
     FROM ${table} GROUP BY workspace_slug`;

const CHANGES: Record<string, string> = {
  usage_records_inserted: sized('new_rows', ''),
  usage_records_deleted: sized('old_rows', '-'),
  usage_records_updated: `${sized('new_rows', '')} UNION ALL ${sized('old_rows', '-')}`,
};

/**
 * The record counters' slot (migration 1767500000001) is chosen by the writing
 * transaction's id instead of at random for each statement: a transaction that
 * writes records in several statements (a bulk create, one per record) then
 * holds one counter row, never two in an order another transaction could cross
 * (a deadlock between two bulk writes of one workspace). Concurrent writers still
 * spread over the slots (consecutive transaction ids).
 */
export class DataUsageSlotPerTransaction1767500000003 implements MigrationInterface {
  name = 'DataUsageSlotPerTransaction1767500000003';

  async up(q: QueryRunner): Promise<void> {
    await this.define(q, `(txid_current() % ${SLOTS})::smallint`);
  }

  async down(q: QueryRunner): Promise<void> {
    await this.define(q, `floor(random() * ${SLOTS})::smallint`);
  }

  private async define(q: QueryRunner, slot: string): Promise<void> {
    for (const [name, changes] of Object.entries(CHANGES)) {
      await q.query(`CREATE OR REPLACE FUNCTION data.${name}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN ${apply(slot, changes)} RETURN NULL; END $$`);
    }
  }
}
