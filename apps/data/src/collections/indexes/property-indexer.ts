import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, QueryRunner } from 'typeorm';
import type { PropertyDefinition } from '@strata/contracts';
import { desiredIndexes, desiredStatistics, indexPrefix } from './property-indexes.js';

interface CollectionIndexRow {
  id: string;
  properties: PropertyDefinition[];
  default_search_field: string | null;
  deleted_at: Date | null;
}

/**
 * Keeps the per-collection indexes (property-indexes.ts) in step with each
 * collection's definition. Indexes are built with CREATE INDEX CONCURRENTLY, so
 * writes go on while a large collection is indexed; the work runs after the
 * collection change commits, one collection at a time per replica, under a
 * per-collection advisory lock across replicas. A build cut off by a crash
 * leaves an invalid index: every boot reconciles all collections, dropping
 * invalid and unwanted indexes and building missing ones, so nothing is lost.
 * The collection's planner statistics (extended statistics on its properties'
 * expressions, same name prefix) are kept in step the same way; after creating
 * one, the indexer ANALYZEs the records table so that the planner has figures
 * at once (ANALYZE samples the table: seconds, not a scan of every row).
 */
@Injectable()
export class PropertyIndexer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PropertyIndexer.name);
  private tail: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  onApplicationBootstrap(): void {
    this.enqueue(() => this.reconcileAll());
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.tail;
  }

  /** Brings one collection's indexes in step, after the current work (the caller does not wait). */
  schedule(collectionId: string): void {
    this.enqueue(async () => void (await this.reconcile(collectionId)));
  }

  private enqueue(work: () => Promise<void>): void {
    this.tail = this.tail.then(async () => {
      if (this.stopping) return;
      await work().catch((err: unknown) =>
        this.logger.warn({ msg: 'index reconciliation failed; the next boot retries it', err: String(err) }),
      );
    });
  }

  async reconcileAll(): Promise<void> {
    const live = await this.db.query<{ id: string }[]>('SELECT id FROM data.collections WHERE deleted_at IS NULL');
    const indexed = await this.db.query<{ name: string }[]>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'data' AND c.relkind = 'i' AND c.relname LIKE 'rx\\_%'`,
    );
    const statistics = await this.db.query<{ name: string }[]>(
      `SELECT s.stxname AS name FROM pg_statistic_ext s JOIN pg_namespace n ON n.oid = s.stxnamespace
       WHERE n.nspname = 'data' AND s.stxname LIKE 'rx\\_%'`,
    );
    const ids = new Set(live.map((r) => r.id));
    // Collections deleted while an index or statistics of theirs remained: the id is in the name.
    for (const { name } of [...indexed, ...statistics]) {
      const hex = /^rx_([0-9a-f]{32})_/.exec(name)?.[1];
      if (hex) ids.add(hex.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5'));
    }
    // One ANALYZE after the pass, not one per collection (the first boot after an upgrade
    // creates the statistics of every collection).
    let created = 0;
    for (const id of ids) {
      if (this.stopping) break;
      created += await this.reconcile(id, false);
    }
    if (created) await this.db.query('ANALYZE data.records');
  }

  /**
   * Brings one collection's indexes and statistics in step; answers how many statistics objects
   * it created (ANALYZEd at once unless `analyze` is false).
   */
  async reconcile(collectionId: string, analyze = true): Promise<number> {
    const runner = this.db.createQueryRunner();
    await runner.connect();
    const lock = `data-indexes:${collectionId}`;
    try {
      await runner.query('SELECT pg_advisory_lock(hashtext($1))', [lock]);
      const rows = (await runner.query(
        'SELECT id, properties, default_search_field, deleted_at FROM data.collections WHERE id = $1',
        [collectionId],
      )) as CollectionIndexRow[];
      const row = rows[0];
      const live = row && !row.deleted_at;
      const wanted = live
        ? desiredIndexes({ id: row.id, properties: row.properties, defaultSearchField: row.default_search_field })
        : [];
      const existing = await this.existing(runner, collectionId);
      const keep = new Set(wanted.map((w) => w.name));
      for (const index of existing) {
        if (keep.has(index.name) && index.valid) continue;
        await runner.query(`DROP INDEX CONCURRENTLY IF EXISTS data.${index.name}`);
        this.logger.log({ msg: 'dropped records index', index: index.name, valid: index.valid });
      }
      const valid = new Set(existing.filter((e) => e.valid).map((e) => e.name));
      for (const spec of wanted) {
        if (valid.has(spec.name)) continue;
        await runner.query(spec.create);
        this.logger.log({ msg: 'built records index', index: spec.name, collection: collectionId });
      }
      return await this.reconcileStatistics(runner, collectionId, live ? desiredStatistics(row) : [], analyze);
    } finally {
      await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [lock]).catch(() => undefined);
      await runner.release();
    }
  }

  /** Drops the statistics the collection no longer wants, creates the missing ones and (if `analyze`) ANALYZEs. */
  private async reconcileStatistics(
    runner: QueryRunner,
    collectionId: string,
    wanted: { name: string; create: string }[],
    analyze: boolean,
  ): Promise<number> {
    const prefix = indexPrefix(collectionId);
    const existing = (
      (await runner.query(
        `SELECT s.stxname AS name FROM pg_statistic_ext s JOIN pg_namespace n ON n.oid = s.stxnamespace
         WHERE n.nspname = 'data' AND left(s.stxname, length($1)) = $1`,
        [prefix],
      )) as { name: string }[]
    ).map((r) => r.name);
    const keep = new Set(wanted.map((w) => w.name));
    for (const name of existing) {
      if (keep.has(name)) continue;
      await runner.query(`DROP STATISTICS IF EXISTS data.${name}`);
      this.logger.log({ msg: 'dropped records statistics', statistics: name });
    }
    const have = new Set(existing);
    const missing = wanted.filter((w) => !have.has(w.name));
    for (const spec of missing) await runner.query(spec.create);
    if (missing.length) {
      if (analyze) await runner.query('ANALYZE data.records');
      this.logger.log({ msg: 'built records statistics', count: missing.length, collection: collectionId });
    }
    return missing.length;
  }

  private async existing(runner: QueryRunner, collectionId: string): Promise<{ name: string; valid: boolean }[]> {
    const prefix = indexPrefix(collectionId);
    return (await runner.query(
      `SELECT c.relname AS name, i.indisvalid AS valid FROM pg_index i
       JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'data' AND left(c.relname, length($1)) = $1`,
      [prefix],
    )) as { name: string; valid: boolean }[];
  }
}
