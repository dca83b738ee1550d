import type { MigrationEvent, MigrationEventName, MigrationProgress } from '@strata/contracts';
import type { MigrationRow } from './migrations.repository.js';

/** A job's counters as the API and the events show them. */
export function progressOf(job: MigrationRow, pending: number): MigrationProgress {
  return {
    total: job.total,
    processed: job.processed,
    converted: job.converted,
    alreadyValid: job.already_valid,
    failed: job.failed,
    pending,
    revertProcessed: job.revert_processed,
    reverted: job.reverted,
    revertFailed: job.revert_failed,
  };
}

/** A migration event of a job, at `now` (the service's clock). */
export function migrationEvent(
  event: MigrationEventName,
  job: MigrationRow,
  recordSlug: string,
  pending: number,
  now: Date,
): MigrationEvent {
  return {
    event,
    workspaceSlug: job.workspace_slug,
    recordSlug,
    structureId: job.collection_id,
    migrationId: job.id,
    status: job.status,
    progress: progressOf(job, pending),
    timestamp: now.toISOString(),
  };
}
