import { IsBoolean, IsInt, IsString, Matches, Max, Min, ValidateBy } from 'class-validator';
import { IsOptional, ServiceConfig } from '@strata/platform';

const DAY_S = 86_400;

/** The replay window may not outlast the runs (a claim answers with its run). */
function WithinRunRetention(): PropertyDecorator {
  return ValidateBy({
    name: 'withinRunRetention',
    validator: {
      validate: (value: unknown, args) => {
        const days = (args?.object as Partial<OrchestrationConfig>).ORCHESTRATION_RUN_RETENTION_DAYS;
        return typeof value !== 'number' || typeof days !== 'number' || value <= days * DAY_S;
      },
      defaultMessage: () =>
        'must be at most ORCHESTRATION_RUN_RETENTION_DAYS in seconds (a claim answers with its run)',
    },
  });
}

/** Settings of the orchestration service (environment variables; initialisers are the defaults). */
export class OrchestrationConfig extends ServiceConfig {
  @IsInt()
  @Min(0)
  @Max(65535)
  ORCHESTRATION_PORT = 8084;

  /** How long the service waits for compute to answer which functions exist. */
  @IsInt()
  @Min(100)
  @Max(60_000)
  ORCHESTRATION_COMPUTE_TIMEOUT_MS = 5000;

  /**
   * `host:port` of a Temporal frontend. When set, runs execute as Temporal
   * workflows (one per run) instead of on the embedded engine.
   */
  @IsOptional()
  @Matches(/^[A-Za-z0-9.-]+:\d{1,5}$/, { message: 'TEMPORAL_ADDRESS must be host:port' })
  TEMPORAL_ADDRESS?: string;

  @IsString()
  @Matches(/^[A-Za-z0-9._-]{1,200}$/)
  TEMPORAL_NAMESPACE = 'default';

  /** The task queue of the run workflows and their activities (one per deployment: tests give each run its own). */
  @IsString()
  @Matches(/^[A-Za-z0-9._-]{1,200}$/)
  TEMPORAL_TASK_QUEUE = 'strata-orchestration-runs';

  /**
   * Whether this replica executes runs: claims them on the embedded engine, or
   * with TEMPORAL_ADDRESS hands them to Temporal and runs a Temporal worker.
   */
  @IsBoolean()
  ORCHESTRATION_ENGINE_ENABLED = true;

  /** How often the engine looks for due runs. */
  @IsInt()
  @Min(10)
  @Max(60_000)
  ORCHESTRATION_ENGINE_INTERVAL_MS = 100;

  /** How often a compute step's function run is looked in on. */
  @IsInt()
  @Min(10)
  @Max(60_000)
  ORCHESTRATION_POLL_MS = 100;

  /** Whether this replica turns record events into runs of event-driven orchestrations (replicas share the consumer). */
  @IsBoolean()
  ORCHESTRATION_EVENT_TRIGGERS_ENABLED = true;

  /** How often the scheduler looks for due scheduled orchestrations. */
  @IsInt()
  @Min(10)
  @Max(60_000)
  ORCHESTRATION_SCHEDULER_INTERVAL_MS = 250;

  /**
   * How long a verified plain HMAC-SHA256 webhook signature is remembered on its
   * orchestration, in seconds: the same signature again within this time (the request
   * replayed) is answered with the first run and starts nothing. After it, the same
   * request starts a run again (the scheme has no timestamp: nothing else can tell a
   * replay). 0 turns it off. At most the runs' retention.
   */
  @IsInt()
  @Min(0)
  @WithinRunRetention()
  ORCHESTRATION_HMAC_REPLAY_WINDOW_S = 7 * DAY_S;

  /** How long a finished run is kept (its ttlExpiresAt). */
  @IsInt()
  @Min(1)
  @Max(3650)
  ORCHESTRATION_RUN_RETENTION_DAYS = 30;
}
