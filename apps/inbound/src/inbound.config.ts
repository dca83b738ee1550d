import { IsBoolean, IsInt, Max, Min, ValidateBy } from 'class-validator';
import { ServiceConfig } from '@strata/platform';

const DAY_S = 86_400;

/** The replay window may not outlast the arrivals (a claim answers with its arrival). */
function WithinRetention(): PropertyDecorator {
  return ValidateBy({
    name: 'withinRetention',
    validator: {
      validate: (value: unknown, args) => {
        const days = (args?.object as Partial<InboundConfig>).INBOUND_EVENT_RETENTION_DAYS;
        return typeof value !== 'number' || typeof days !== 'number' || value <= days * DAY_S;
      },
      defaultMessage: () =>
        'must be at most INBOUND_EVENT_RETENTION_DAYS in seconds (a claim answers with its arrival)',
    },
  });
}

/** Settings of the inbound service (environment variables; initialisers are the defaults). */
export class InboundConfig extends ServiceConfig {
  @IsInt()
  @Min(0)
  @Max(65535)
  INBOUND_PORT = 8086;

  /**
   * Largest http-trigger body, in bytes (413 above). The body reaches the run
   * through one NATS message, whose default limit is 1 MiB.
   */
  @IsInt()
  @Min(1024)
  @Max(768 * 1024)
  INBOUND_MAX_BODY_BYTES = 512 * 1024;

  /** How far a Standard Webhooks `webhook-timestamp` may be from now, either way, in seconds. */
  @IsInt()
  @Min(1)
  @Max(3600)
  INBOUND_SIGNATURE_TOLERANCE_S = 300;

  /**
   * How long a verified plain HMAC-SHA256 signature is remembered on its trigger, in
   * seconds: the same signature again within this time (the same request replayed, or a
   * provider's identical retry) is answered as the first arrival and stored and run once.
   * After it, the same request is accepted again (the scheme has no timestamp: nothing
   * else can tell a replay). 0 turns it off. At most the arrivals' retention.
   */
  @IsInt()
  @Min(0)
  @WithinRetention()
  INBOUND_HMAC_REPLAY_WINDOW_S = 7 * DAY_S;

  /** Arrivals older than this many days are deleted (the spec's INBOUND_EVENT_RETENTION_DAYS). */
  @IsInt()
  @Min(1)
  @Max(3650)
  INBOUND_EVENT_RETENTION_DAYS = 30;

  /** Whether this replica runs the sweeps (dispatch of arrivals left `received`, retention). */
  @IsBoolean()
  INBOUND_SWEEPER_ENABLED = true;

  /** How often the sweeps run. */
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  INBOUND_SWEEP_INTERVAL_MS = 5000;

  /** An arrival still `received` this long after it was stored is dispatched by the sweep. */
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  INBOUND_REDISPATCH_AFTER_MS = 10_000;

  /**
   * How long a trigger looked up for an arrival is reused (0: every arrival asks compute).
   * A change to the trigger (secret, pause, deletion) reaches arrivals within this time;
   * compute checks pause and deletion again when it queues the run.
   */
  @IsInt()
  @Min(0)
  @Max(60_000)
  INBOUND_TRIGGER_CACHE_MS = 2000;

  /** How long the service waits for compute to answer a lookup or a dispatch. */
  @IsInt()
  @Min(100)
  @Max(60_000)
  INBOUND_COMPUTE_TIMEOUT_MS = 5000;
}
