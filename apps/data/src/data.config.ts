import { IsBoolean, IsInt, Max, Min } from 'class-validator';
import { ServiceConfig } from '@strata/platform';

/** Settings of the data service (environment variables; initialisers are the defaults). */
export class DataConfig extends ServiceConfig {
  @IsInt()
  @Min(0)
  @Max(65535)
  DATA_PORT = 8082;

  /** Whether this replica publishes the event outbox (every replica may; they share the rows). */
  @IsBoolean()
  DATA_OUTBOX_RELAY_ENABLED = true;

  /** Pause between outbox passes when nothing is pending. */
  @IsInt()
  @Min(10)
  @Max(60_000)
  DATA_OUTBOX_INTERVAL_MS = 200;

  @IsInt()
  @Min(1)
  @Max(1000)
  DATA_OUTBOX_BATCH_SIZE = 100;

  /** How long an Idempotency-Key replays its first response. */
  @IsInt()
  @Min(1)
  @Max(24 * 7)
  DATA_IDEMPOTENCY_WINDOW_HOURS = 24;

  /** Whether this replica deletes expired records (replicas share the work). */
  @IsBoolean()
  DATA_TTL_SWEEP_ENABLED = true;

  @IsInt()
  @Min(50)
  @Max(3_600_000)
  DATA_TTL_SWEEP_INTERVAL_MS = 5000;

  /**
   * Whether this replica runs the retention sweeps (replicas share the work): record versions
   * and changelog by their collections' retention policies, the changelog of the others after
   * DATA_CHANGELOG_RETENTION_DAYS, deleted records after DATA_DELETED_RECORD_RETENTION_DAYS,
   * Idempotency-Keys after their window.
   */
  @IsBoolean()
  DATA_RETENTION_SWEEP_ENABLED = true;

  @IsInt()
  @Min(50)
  @Max(86_400_000)
  DATA_RETENTION_SWEEP_INTERVAL_MS = 600_000;

  /**
   * Whether this replica runs the usage reconciliation (docs/plans.md): each workspace's record
   * and storage counters are recomputed from its records and any drift is repaired.
   */
  @IsBoolean()
  DATA_USAGE_RECONCILE_ENABLED = true;

  @IsInt()
  @Min(50)
  @Max(86_400_000)
  DATA_USAGE_RECONCILE_INTERVAL_MS = 3_600_000;

  /** Changelog entries older than this are deleted, unless the collection's `retentionPolicy.maxAgeDays` says otherwise. */
  @IsInt()
  @Min(1)
  @Max(36_500)
  DATA_CHANGELOG_RETENTION_DAYS = 365;

  /** A deleted record (by DELETE or TTL) stays restorable this long, then it is removed for good. */
  @IsInt()
  @Min(1)
  @Max(3650)
  DATA_DELETED_RECORD_RETENTION_DAYS = 30;

  /** Most conditions a canonical or saved query may hold ("Query complexity limit exceeded" beyond). */
  @IsInt()
  @Min(1)
  @Max(100)
  DATA_QUERY_MAX_CONDITIONS = 50;

  /** Most joins a saved or canonical query may hold. */
  @IsInt()
  @Min(0)
  @Max(10)
  DATA_QUERY_MAX_JOINS = 3;

  /** Right and full joins are refused unless the operator enables them. */
  @IsBoolean()
  DATA_QUERY_OUTER_JOINS_ENABLED = false;

  /**
   * Whether record secrets sealed before they were bound to their record (bound to
   * collection and field only) are still read. `reencrypt` rebinds them; once it reports
   * none left, false refuses any such envelope (one copied in from elsewhere).
   */
  @IsBoolean()
  DATA_SECRETS_LEGACY_BINDING = true;

  /** Whether this replica runs collection migrations (replicas share the jobs: one runs each at a time). */
  @IsBoolean()
  DATA_MIGRATION_RUNNER_ENABLED = true;

  /**
   * A collection of at most this many records is converted in the transaction of the change
   * itself (writes to it wait, as for any schema change): the change answers with its
   * migration done. 0: every migration runs as a job.
   */
  @IsInt()
  @Min(0)
  @Max(100_000)
  DATA_MIGRATION_INLINE_RECORDS = 1000;

  /** Records a migration converts per batch (one short transaction each). */
  @IsInt()
  @Min(1)
  @Max(5000)
  DATA_MIGRATION_BATCH_SIZE = 500;

  /** Pause between two batches of a migration (0: none), to leave more of the database to clients. */
  @IsInt()
  @Min(0)
  @Max(60_000)
  DATA_MIGRATION_BATCH_PAUSE_MS = 0;

  /** How often a replica looks for a migration to run (one started or cancelled on this replica starts at once). */
  @IsInt()
  @Min(10)
  @Max(600_000)
  DATA_MIGRATION_POLL_INTERVAL_MS = 2000;

  /** Least time between two `collection_migration_progress` events of a job (by the service's clock). */
  @IsInt()
  @Min(0)
  @Max(3_600_000)
  DATA_MIGRATION_PROGRESS_EVENT_MS = 1000;

  /**
   * How long after a migration job completes (by the service's clock) writes still convert
   * values of the definition before, as during the job; only while the properties are the
   * ones the job converted to. 0: not after the job.
   */
  @IsInt()
  @Min(0)
  @Max(604_800_000)
  DATA_MIGRATION_WRITE_GRACE_MS = 3_600_000;
}
