import { IsBoolean, IsInt, Max, Min } from 'class-validator';
import { ServiceConfig } from '@strata/platform';

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

  /** Whether this replica runs the embedded engine (replicas share due runs through SKIP LOCKED claims). */
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

  /** How long a finished run is kept (its ttlExpiresAt). */
  @IsInt()
  @Min(1)
  @Max(3650)
  ORCHESTRATION_RUN_RETENTION_DAYS = 30;
}
