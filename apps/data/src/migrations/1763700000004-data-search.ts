import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Trigram similarity for typo-tolerant text search (pg_trgm is a trusted extension: no superuser needed). */
export class DataSearch1763700000004 implements MigrationInterface {
  name = 'DataSearch1763700000004';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA data');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP EXTENSION IF EXISTS pg_trgm');
  }
}
