import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Counter rows per workspace: a write adds to one at random, so concurrent writers rarely meet on a row. */
export const USAGE_SLOTS = 16;

/**
 * What a workspace's records count against its plan (docs/plans.md): live
 * records (not soft-deleted) and the stored size of every record's data
 * (`pg_column_size(data)`, soft-deleted records included until purged),
 * kept in step with every write by statement triggers on data.records (one
 * counter update per statement, whatever path wrote: API, bulk, sweeps,
 * cascades), spread over USAGE_SLOTS rows per workspace and summed on read.
 * The reconciliation job (UsageReconciler) repairs any drift. Filled here from
 * the records there are.
 */
export class DataUsageCounters1767500000001 implements MigrationInterface {
  name = 'DataUsageCounters1767500000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE data.usage_counters (
      workspace_slug text NOT NULL,
      slot smallint NOT NULL,
      records bigint NOT NULL DEFAULT 0,
      storage_bytes bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (workspace_slug, slot)
    )`);
    // Adds the statement's changes (per workspace: live records, data bytes) to a random slot.
    const apply = (changes: string) => `
      INSERT INTO data.usage_counters AS c (workspace_slug, slot, records, storage_bytes)
      SELECT workspace_slug, floor(random() * ${USAGE_SLOTS})::smallint, sum(records), sum(bytes)
        FROM (${changes}) d
       GROUP BY workspace_slug
      HAVING sum(records) <> 0 OR sum(bytes) <> 0
      ON CONFLICT (workspace_slug, slot) DO UPDATE
        SET records = c.records + EXCLUDED.records, storage_bytes = c.storage_bytes + EXCLUDED.storage_bytes;`;
    const sized = (table: string, sign: string) =>
      `SELECT workspace_slug, ${sign}count(*) FILTER (WHERE deleted_at IS NULL) AS records,
              ${sign}coalesce(sum(pg_column_size(data)), 0) AS bytes
         FROM ${table} GROUP BY workspace_slug`;
    const fn = async (name: string, changes: string): Promise<void> => {
      await q.query(`CREATE FUNCTION data.${name}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN ${apply(changes)} RETURN NULL; END $$`);
    };
    await fn('usage_records_inserted', sized('new_rows', ''));
    await fn('usage_records_deleted', sized('old_rows', '-'));
    await fn('usage_records_updated', `${sized('new_rows', '')} UNION ALL ${sized('old_rows', '-')}`);
    await q.query(`CREATE TRIGGER usage_records_inserted AFTER INSERT ON data.records
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION data.usage_records_inserted()`);
    await q.query(`CREATE TRIGGER usage_records_deleted AFTER DELETE ON data.records
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION data.usage_records_deleted()`);
    await q.query(`CREATE TRIGGER usage_records_updated AFTER UPDATE ON data.records
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
      EXECUTE FUNCTION data.usage_records_updated()`);
    await q.query(`INSERT INTO data.usage_counters (workspace_slug, slot, records, storage_bytes)
      SELECT workspace_slug, 0, count(*) FILTER (WHERE deleted_at IS NULL), coalesce(sum(pg_column_size(data)), 0)
        FROM data.records GROUP BY workspace_slug`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const name of ['usage_records_inserted', 'usage_records_deleted', 'usage_records_updated']) {
      await q.query(`DROP TRIGGER IF EXISTS ${name} ON data.records`);
      await q.query(`DROP FUNCTION IF EXISTS data.${name}()`);
    }
    await q.query(`DROP TABLE IF EXISTS data.usage_counters`);
  }
}
