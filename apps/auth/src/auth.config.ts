import { IsEmail, IsInt, IsString, Matches, Max, Min, MinLength } from 'class-validator';
import { DEVELOPMENT_FUNCTIONS_PRINCIPAL_KEY, NotDefaultInProduction, Secret, ServiceConfig } from '@strata/platform';

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
  @NotDefaultInProduction('strata-admin')
  STRATA_ADMIN_PASSWORD = 'strata-admin';

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
}
