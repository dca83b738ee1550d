import { Injectable } from '@nestjs/common';
import { ErrorCode, type MigrationProgress, type PropertyDefinition } from '@strata/contracts';
import { afterCommit, Transactions, type WorkspaceScope } from '@strata/db';
import { Clock, StrataException, type PageQuery } from '@strata/platform';
import { CollectionsRepository } from '../collections/collections.repository.js';
import { PropertyIndexer } from '../collections/indexes/property-indexer.js';
import { progressOf } from '../collections/migrations/migration-events.js';
import type { FieldFailure } from '../collections/migrations/migration-plan.js';
import { MigrationSignals } from '../collections/migrations/migration-signals.js';
import {
  MigrationsRepository,
  type FailureRow,
  type MigrationRow,
} from '../collections/migrations/migrations.repository.js';
import { SecretFieldsRepository } from '../collections/secret-fields.repository.js';

/** Records listed in a job's answer; the rest through its failures list. */
const LISTED_FAILURES = 100;

export interface MigrationFailure {
  recordId: string;
  /** `migrate`: the record could not meet the new definition; `cancel`: it could not be put back. */
  phase: 'migrate' | 'cancel';
  fields: FieldFailure[];
}

export interface MigrationChange {
  property: string;
  from: PropertyDefinition | null;
  to: PropertyDefinition | null;
}

export interface MigrationResponse {
  id: string;
  structureId: string;
  status: MigrationRow['status'];
  phase: MigrationRow['phase'];
  changes: MigrationChange[];
  progress: MigrationProgress;
  /** Share of `total` checked (100 once the scan is over: records created meanwhile are counted too). */
  percent: number;
  failures?: MigrationFailure[];
  failuresTotal?: number;
  createdBy: string;
  cancelledBy?: string;
  error?: string;
  createdAt: string;
  updatedAt: string;
  finishedAt?: string;
}

export interface Page<T> {
  results: T[];
  pagination: { limit: number; offset: number; total: number; hasMore: boolean };
}

/** The migration jobs of a collection: read, list, cancel. */
@Injectable()
export class MigrationsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly repository: MigrationsRepository,
    private readonly collections: CollectionsRepository,
    private readonly secretFields: SecretFieldsRepository,
    private readonly indexes: PropertyIndexer,
    private readonly signals: MigrationSignals,
    private readonly clock: Clock,
  ) {}

  async list(scope: WorkspaceScope, collectionId: string, query: PageQuery): Promise<Page<MigrationResponse>> {
    await this.collections.find(scope, { id: collectionId });
    const limit = query.limit ?? 20;
    const offset = query.offset ?? 0;
    const { rows, total } = await this.repository.list(scope, collectionId, limit, offset);
    const results = await Promise.all(rows.map(async (r) => present(r, await this.repository.pendingCount(r.id))));
    return { results, pagination: { limit, offset, total, hasMore: offset + rows.length < total } };
  }

  async get(scope: WorkspaceScope, collectionId: string, id: string): Promise<MigrationResponse> {
    const job = await this.find(scope, collectionId, id);
    const failures = await this.repository.failures(scope, id, LISTED_FAILURES, 0);
    return {
      ...present(job, await this.repository.pendingCount(id)),
      failures: failures.rows.flatMap(toFailures),
      failuresTotal: failures.total,
    };
  }

  async failures(
    scope: WorkspaceScope,
    collectionId: string,
    id: string,
    query: PageQuery,
  ): Promise<Page<MigrationFailure>> {
    await this.find(scope, collectionId, id);
    const limit = query.limit ?? 20;
    const offset = query.offset ?? 0;
    const { rows, total } = await this.repository.failures(scope, id, limit, offset);
    return {
      results: rows.flatMap(toFailures),
      pagination: { limit, offset, total, hasMore: offset + rows.length < total },
    };
  }

  /**
   * Cancels a running migration: the collection gets its old properties back at once (new
   * writes are validated against them), and the runner puts back the values it replaced and
   * converts the values written since to the old definition.
   */
  async cancel(scope: WorkspaceScope, collectionId: string, id: string, actor: string): Promise<MigrationResponse> {
    await this.transactions.run(async (tx) => {
      // The job first, as a batch takes it: the batch in flight ends before the cancel goes on.
      const job = await this.repository.find(scope, collectionId, id, tx);
      if (!job) throw notFound(id);
      if (job.status !== 'running') {
        throw StrataException.conflict(`Migration ${id} is ${job.status}: only a running migration can be cancelled`);
      }
      const all = await this.collections.lockWorkspace(scope, tx, true);
      if (!all.some((c) => c.id === collectionId)) {
        throw StrataException.notFound(`Collection ${collectionId} not found`, ErrorCode.STRUCTURE_NOT_FOUND);
      }
      await this.secretFields.apply(scope, tx, collectionId, job.to_properties, job.from_properties);
      await this.repository.setProperties(scope, tx, collectionId, job.from_properties, actor);
      await this.repository.startRevert(tx, id, actor, this.clock.now());
      afterCommit(tx, () => {
        this.signals.wake();
        this.indexes.schedule(collectionId);
      });
    });
    return this.get(scope, collectionId, id);
  }

  private async find(scope: WorkspaceScope, collectionId: string, id: string): Promise<MigrationRow> {
    const job = await this.repository.find(scope, collectionId, id);
    if (!job) throw notFound(id);
    return job;
  }
}

function notFound(id: string): StrataException {
  return StrataException.notFound(`Migration ${id} not found`);
}

function present(job: MigrationRow, pending: number): MigrationResponse {
  const scanned = job.status === 'cancelling' ? job.revert_processed : job.processed;
  const percent =
    job.finished_at !== null || job.phase === 'recheck'
      ? 100
      : job.total === 0
        ? 0
        : Math.min(99, Math.floor((scanned / job.total) * 100));
  return {
    id: job.id,
    structureId: job.collection_id,
    status: job.status,
    phase: job.phase,
    changes: job.fields.map((f) => ({
      property: f.name,
      from: job.from_properties.find((p) => p.name === f.name) ?? null,
      to: job.to_properties.find((p) => p.name === f.name) ?? null,
    })),
    progress: progressOf(job, pending),
    percent,
    createdBy: job.created_by,
    ...(job.cancelled_by ? { cancelledBy: job.cancelled_by } : {}),
    ...(job.error ? { error: job.error } : {}),
    createdAt: job.created_at.toISOString(),
    updatedAt: job.updated_at.toISOString(),
    ...(job.finished_at ? { finishedAt: job.finished_at.toISOString() } : {}),
  };
}

function toFailures(row: FailureRow): MigrationFailure[] {
  return [
    ...(row.failures ? [{ recordId: row.record_id, phase: 'migrate' as const, fields: row.failures }] : []),
    ...(row.revert_failures
      ? [{ recordId: row.record_id, phase: 'cancel' as const, fields: row.revert_failures }]
      : []),
  ];
}
