import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { rowsOf } from '@strata/db';

/**
 * compute.trigger_event_runs: which (event, trigger) pairs have started their run
 * (written with the run: RunsRepository.insertForEvent); old pairs are forgotten here.
 */
@Injectable()
export class EventRunsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * System (every workspace): forgets up to `limit` pairs older than `before` (the stream no
   * longer holds their events), oldest first, picked `FOR UPDATE SKIP LOCKED` so that
   * retention sweeps on several replicas share them; how many went.
   */
  async forgetBefore(before: Date, limit: number): Promise<number> {
    const rows = rowsOf<{ event_id: string }>(
      await this.db.query(
        `DELETE FROM compute.trigger_event_runs WHERE (event_id, trigger_id) IN (
           SELECT event_id, trigger_id FROM compute.trigger_event_runs WHERE created_at < $1
            ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING event_id`,
        [before, limit],
      ),
    );
    return rows.length;
  }
}
