import { IsBoolean, IsInt, IsString, Matches, Max, Min, ValidateBy } from 'class-validator';
import { dnsServersProblem } from '@strata/egress';
import { DEVELOPMENT_FUNCTIONS_PRINCIPAL_KEY, NotDefaultInProduction, Secret, ServiceConfig } from '@strata/platform';

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
   * Receivers that are not global unicast addresses (loopback, private, link-local, the
   * special-purpose blocks; see @strata/egress) are refused unless this is true (local
   * development and tests; off in the Helm chart).
   */
  @IsBoolean()
  WEBHOOKS_ALLOW_PRIVATE_RECEIVERS = false;

  /**
   * DNS servers receivers' names are resolved with (comma-separated `ip`, `ip:port` or
   * `[ipv6]:port`); empty: the system's (`/etc/resolv.conf`). Queried through c-ares on
   * the event loop, never getaddrinfo on the libuv thread pool (@strata/egress).
   */
  @IsString()
  @ValidateBy({
    name: 'dnsServers',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && dnsServersProblem(value) === undefined,
      defaultMessage: (args) => `is not a list of DNS servers: ${dnsServersProblem(String(args?.value)) ?? ''}`,
    },
  })
  WEBHOOKS_DNS_SERVERS = '';

  /** How long each try of a receiver's name lookup waits for the DNS server. */
  @IsInt()
  @Min(10)
  @Max(30_000)
  WEBHOOKS_DNS_TIMEOUT_MS = 2000;

  /** How many times each DNS server is tried before the lookup fails with a timeout. */
  @IsInt()
  @Min(1)
  @Max(10)
  WEBHOOKS_DNS_TRIES = 2;

  /** Delays before attempts 2 to 5, in milliseconds (the spec's 30 s, 2 min, 10 min, 30 min). */
  @Matches(/^\s*\d{1,9}(\s*,\s*\d{1,9}){3}\s*$/, { message: 'must be four comma-separated delays in milliseconds' })
  WEBHOOKS_RETRY_DELAYS_MS = '30000,120000,600000,1800000';

  /** Time allowed for one attempt: connect, request, response headers and the bounded body. */
  @IsInt()
  @Min(100)
  @Max(60_000)
  WEBHOOKS_ATTEMPT_TIMEOUT_MS = 10_000;

  /** How much of a receiver's response body is read and stored; the rest is not read. */
  @IsInt()
  @Min(0)
  @Max(65_536)
  WEBHOOKS_RESPONSE_BODY_MAX_BYTES = 4096;

  /** Whether this replica consumes record events into deliveries (replicas share the durable consumer). */
  @IsBoolean()
  WEBHOOKS_CONSUMER_ENABLED = true;

  /** Record events this replica turns into deliveries at once. */
  @IsInt()
  @Min(1)
  @Max(256)
  WEBHOOKS_CONSUMER_CONCURRENCY = 16;

  /** Whether this replica sends due attempts (replicas share them through SKIP LOCKED claims). */
  @IsBoolean()
  WEBHOOKS_DISPATCHER_ENABLED = true;

  /** Pause between looks for due attempts when nothing is due (new deliveries wake the local dispatcher). */
  @IsInt()
  @Min(10)
  @Max(60_000)
  WEBHOOKS_DISPATCH_INTERVAL_MS = 500;

  /** Most attempts one replica has in flight at once. */
  @IsInt()
  @Min(1)
  @Max(1000)
  WEBHOOKS_DELIVERY_CONCURRENCY = 64;

  /** Finished deliveries (and their attempts) are deleted this many days after they finished. */
  @IsInt()
  @Min(1)
  @Max(3650)
  WEBHOOKS_DELIVERY_RETENTION_DAYS = 30;

  /**
   * Whether this replica runs the retention sweep (finished deliveries, Idempotency-Keys past
   * their window); replicas share the rows.
   */
  @IsBoolean()
  WEBHOOKS_RETENTION_SWEEP_ENABLED = true;

  @IsInt()
  @Min(50)
  @Max(86_400_000)
  WEBHOOKS_RETENTION_SWEEP_INTERVAL_MS = 60_000;

  /**
   * The key the auth and compute services share to derive each workspace's function
   * principal secret (docs/identity.md). The webhooks service presents that principal's
   * token to ask the auth service what a subscription's owner may see
   * (docs/webhooks.md, "Whose events a subscription receives").
   */
  @Secret()
  @Matches(/^[A-Za-z0-9+/]{43}=$/, { message: 'must be the base64 of 32 bytes' })
  @NotDefaultInProduction(DEVELOPMENT_FUNCTIONS_PRINCIPAL_KEY)
  STRATA_FUNCTIONS_PRINCIPAL_KEY = DEVELOPMENT_FUNCTIONS_PRINCIPAL_KEY;
}
