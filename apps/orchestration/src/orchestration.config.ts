import { IsInt, Max, Min } from 'class-validator';
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
}
