import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { rowsOf } from '@strata/db';

/**
 * What retention deletes of function runs, across every workspace (a run's age decides,
 * not a request). Picked `FOR UPDATE SKIP LOCKED`: sweepers on several replicas share the
 * rows and never wait on each other.
 */
@Injectable()
export class RunRetentionRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Up to `limit` runs that ended before `before`, with what they hold (logs, `api` calls,
   * result, error, parameters) and their `api.storeAsJSON` documents (a cascade); how
   * many runs went. A queued or running run is never touched, however old.
   */
  async deleteFinished(before: Date, limit: number): Promise<number> {
    const rows = rowsOf<{ id: string }>(
      await this.db.query(
        `DELETE FROM compute.runs WHERE id IN (
           SELECT id FROM compute.runs WHERE finished_at < $1 AND status NOT IN ('queued', 'running')
            ORDER BY finished_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING id`,
        [before, limit],
      ),
    );
    return rows.length;
  }
}
