import { IsBoolean, IsEmail, IsInt, IsString, Matches, Max, Min, MinLength, ValidateBy } from 'class-validator';
import {
  DEVELOPMENT_ADMIN_PASSWORD,
  DEVELOPMENT_FUNCTIONS_PRINCIPAL_KEY,
  NotDefaultInProduction,
  Secret,
  ServiceConfig,
} from '@strata/platform';
import { parseTrustedProxies } from './sign-in-throttle/client-address.js';

/** Settings of the auth service (environment variables; initialisers are the defaults). */
export class AuthConfig extends ServiceConfig {
  @IsInt()
  @Min(0)
  @Max(65535)
  AUTH_PORT = 8081;

  /** The administrator created on first start. */
  @IsEmail({ require_tld: false })
  STRATA_ADMIN_EMAIL = 'admin@strata.local';

  @Secret()
  @IsString()
  @MinLength(8)
  @NotDefaultInProduction(DEVELOPMENT_ADMIN_PASSWORD)
  STRATA_ADMIN_PASSWORD = DEVELOPMENT_ADMIN_PASSWORD;

  /**
   * The key the auth and compute services share to derive each workspace's function
   * principal secret (base64 of 32 bytes; docs/compute.md, "The function principal").
   * Changing it on both rotates every function principal's secret.
   */
  @Secret()
  @Matches(/^[A-Za-z0-9+/]{43}=$/, { message: 'must be the base64 of 32 bytes' })
  @NotDefaultInProduction(DEVELOPMENT_FUNCTIONS_PRINCIPAL_KEY)
  STRATA_FUNCTIONS_PRINCIPAL_KEY = DEVELOPMENT_FUNCTIONS_PRINCIPAL_KEY;

  /** Access-token lifetime in seconds (the specification states 25200). */
  @IsInt()
  @Min(60)
  ACCESS_TOKEN_TTL_SECONDS = 25200;

  /** How often each replica reloads signing keys from the database. */
  @IsInt()
  @Min(100)
  SIGNING_KEY_RELOAD_MS = 30_000;

  /**
   * A rotated-in key is published this long before it signs, so every replica
   * and every resource server's JWKS cache knows it first.
   */
  @IsInt()
  @Min(0)
  SIGNING_KEY_ACTIVATION_DELAY_MS = 60_000;

  /**
   * Failed sign-ins an account may have (a user's email at the login page; a service
   * account's client id at the token endpoint) before each further attempt must wait
   * (docs/identity.md, "Guessing").
   */
  @IsInt()
  @Min(1)
  LOGIN_FAILURES_PER_ACCOUNT = 5;

  /** Failed sign-ins one client address (an IPv6 address by its /64) may have before each further attempt waits. */
  @IsInt()
  @Min(1)
  LOGIN_FAILURES_PER_ADDRESS = 20;

  /** The first wait past the free failures; each further failure doubles it. */
  @IsInt()
  @Min(1)
  LOGIN_DELAY_BASE_MS = 1000;

  /** The longest wait. */
  @IsInt()
  @Min(1)
  LOGIN_DELAY_MAX_MS = 900_000;

  /** Failures are forgotten this long after the wait of the last one ended. */
  @IsInt()
  @Min(1000)
  LOGIN_FAILURE_MEMORY_MS = 3_600_000;

  /**
   * The proxies whose `X-Forwarded-For` the sign-in limits believe: a list of addresses,
   * subnets and the names loopback, linklocal, uniquelocal, or a number of hops. The
   * client's address is the first hop from the right that is not one of them.
   */
  @ValidateBy({
    name: 'trustedProxies',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && parseTrustedProxies(value) !== undefined,
      defaultMessage: () =>
        'must be a number of hops, or addresses, subnets and loopback, linklocal, uniquelocal separated by commas',
    },
  })
  AUTH_TRUSTED_PROXIES = 'loopback, linklocal, uniquelocal';

  /**
   * Workspaces one user may create (docs/identity.md, "Workspaces"); 0 lets only platform
   * administrators, who have no quota, create them.
   */
  @IsInt()
  @Min(0)
  WORKSPACE_QUOTA_PER_USER = 10;

  /**
   * OIDC provider state (sessions, interactions, grants, codes) is deleted this many hours
   * after it expired; a login's chosen workspace goes once its grant is gone and it is this old.
   */
  @IsInt()
  @Min(1)
  @Max(24 * 365)
  AUTH_OIDC_RETENTION_HOURS = 24;

  /** Whether this replica runs the retention sweep (replicas share the rows). */
  @IsBoolean()
  AUTH_RETENTION_SWEEP_ENABLED = true;

  @IsInt()
  @Min(50)
  @Max(86_400_000)
  AUTH_RETENTION_SWEEP_INTERVAL_MS = 60_000;
}
