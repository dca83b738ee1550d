import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A collection migration walks a collection's records, deleted ones included, in id order
 * (docs/data.md, "Migrations"): without this index each batch would walk the primary key of
 * every collection's records. Built without locking out the writes of replicas still running
 * (CONCURRENTLY, so outside a transaction).
 */
export class DataRecordsByCollectionId1767300000001 implements MigrationInterface {
  name = 'DataRecordsByCollectionId1767300000001';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE INDEX CONCURRENTLY IF NOT EXISTS records_collection_id_idx ON data.records (collection_id, id)',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX CONCURRENTLY IF EXISTS data.records_collection_id_idx');
  }
}
