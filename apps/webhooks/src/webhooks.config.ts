import { IsBoolean, IsInt, Max, Min } from 'class-validator';
import { ServiceConfig } from '@strata/platform';

/** Settings of the webhooks service (environment variables; initialisers are the defaults). */
export class WebhooksConfig extends ServiceConfig {
  @IsInt()
  @Min(0)
  @Max(65535)
  WEBHOOKS_PORT = 8085;

  /** How long an Idempotency-Key on subscription create replays its first response. */
  @IsInt()
  @Min(1)
  @Max(24 * 7)
  WEBHOOKS_IDEMPOTENCY_WINDOW_HOURS = 24;

  /** How long the previous secret keeps signing after a rotation (the spec's 24 hours). */
  @IsInt()
  @Min(0)
  @Max(7 * 24 * 3600)
  WEBHOOKS_ROTATION_GRACE_SECONDS = 24 * 3600;

  /**
   * Receivers on loopback, private or link-local addresses are refused unless this is true
   * (local development and tests; off in the Helm chart).
   */
  @IsBoolean()
  WEBHOOKS_ALLOW_PRIVATE_RECEIVERS = false;
}
