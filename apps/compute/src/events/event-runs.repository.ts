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

  /** System (every workspace): forgets pairs older than `before` (the stream no longer holds their events). */
  async forgetBefore(before: Date, limit: number): Promise<number> {
    const rows = rowsOf<{ event_id: string }>(
      await this.db.query(
        `DELETE FROM compute.trigger_event_runs WHERE ctid IN (
           SELECT ctid FROM compute.trigger_event_runs WHERE created_at < $1 LIMIT $2) RETURNING event_id`,
        [before, limit],
      ),
    );
    return rows.length;
  }
}
