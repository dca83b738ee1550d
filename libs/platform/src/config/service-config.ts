import { IsIn, IsInt, IsString, IsUrl, Matches, Max, Min } from 'class-validator';
import { IsOptional } from '../validation/optional.js';
import { OneNatsCredential, UserWithPassword } from '../nats/nats-credentials.js';
import { ActiveKeyInRing, ValidKeyRing } from './key-ring.config.js';
import { Secret } from './load-config.js';
import { NotDefaultInProduction } from './not-default-in-production.js';

/** Published in the source: accepted only when STRATA_ENV=development. */
export const DEVELOPMENT_ENCRYPTION_KEYS = '1:c3RyYXRhLWRldmVsb3BtZW50LWtleS0wMDAwMDAwMDA=';

const URL_OPTIONS = { require_tld: false, require_protocol: true } as const;

/**
 * Settings every service reads. Each app extends it with its own. Property names
 * are the environment variables; the initialisers are the documented defaults.
 */
export class ServiceConfig {
  /**
   * `development` accepts the published development defaults of secrets
   * (encryption keys, admin password); anything else refuses them. Unset means
   * production: a deployment that forgets it fails safe.
   */
  @IsIn(['development', 'production'])
  STRATA_ENV: 'development' | 'production' = 'production';

  @IsUrl({ ...URL_OPTIONS, protocols: ['postgres', 'postgresql'] }, { message: 'must be a postgres:// URL' })
  DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/strata';

  @IsUrl({ ...URL_OPTIONS, protocols: ['nats', 'tls'] }, { message: 'must be a nats:// URL' })
  NATS_URL = 'nats://127.0.0.1:4222';

  /** Prefix of every JetStream stream, subject and KV bucket of this installation (tests isolate with it). */
  @Matches(/^[a-z][a-z0-9_]{0,31}$/, { message: 'must be lowercase letters, digits or _ (at most 32)' })
  NATS_PREFIX = 'strata';

  /**
   * How this service proves who it is to NATS (docs/deployment.md, "NATS users"): a user
   * and password, an nkey seed (`SU…`), or a credentials file (a user JWT and its seed, as
   * `nsc` writes it); at most one. None: the server lets anyone in, as the machine's local
   * NATS does under `npm start` and the tests.
   */
  @IsOptional()
  @Matches(/^[^\s*>.]{1,128}$/, { message: 'must be a NATS user name (no spaces, dots or wildcards)' })
  @UserWithPassword()
  NATS_USER?: string;

  @Secret()
  @IsOptional()
  @IsString()
  @UserWithPassword()
  @OneNatsCredential()
  NATS_PASSWORD?: string;

  @Secret()
  @IsOptional()
  @Matches(/^SU[A-Z2-7]{56}$/, { message: 'must be an nkey user seed (SU and 56 base32 characters)' })
  @OneNatsCredential()
  NATS_NKEY_SEED?: string;

  @IsOptional()
  @IsString()
  @OneNatsCredential()
  NATS_CREDS_FILE?: string;

  /**
   * Where replies to this service's requests arrive (`<prefix>.<unique>`). Give each
   * service its own (the chart gives `_INBOX.<its NATS user>`) so that its NATS user may
   * subscribe to its own replies and no other service's.
   */
  @Matches(/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/, { message: 'must be a subject without wildcards' })
  NATS_INBOX_PREFIX = '_INBOX';

  @IsIn(['fatal', 'error', 'warn', 'log', 'debug', 'verbose'])
  LOG_LEVEL: 'fatal' | 'error' | 'warn' | 'log' | 'debug' | 'verbose' = 'log';

  @IsString()
  HOST = '0.0.0.0';

  /** Issuer of access tokens: `{auth_url}/oidc`. */
  @IsUrl(URL_OPTIONS)
  AUTH_ISSUER = 'http://localhost:8081/oidc';

  /** Where this service reaches the auth service (JWKS, permission resolution). */
  @IsUrl(URL_OPTIONS)
  AUTH_INTERNAL_URL = 'http://127.0.0.1:8081';

  /**
   * Least time between two JWKS fetches triggered by an unknown `kid`. Keep it
   * below the auth service's SIGNING_KEY_ACTIVATION_DELAY_MS so a rotated key is
   * always fetched before it signs.
   */
  @IsInt()
  @Min(0)
  JWKS_REFRESH_COOLDOWN_MS = 30_000;

  /** Audience (resource indicator) of access tokens for the Strata APIs. */
  @IsString()
  API_AUDIENCE = 'urn:strata:api';

  /** How long resolved permissions are cached; changes take effect within this time. */
  @IsInt()
  @Min(0)
  @Max(5000)
  PERMISSION_CACHE_TTL_MS = 3000;

  /**
   * How long a workspace's plan (docs/plans.md) is kept once asked of the auth service.
   * A plan change is announced and applies at once; this bounds how long a missed
   * announcement keeps an old plan in force.
   */
  @IsInt()
  @Min(0)
  @Max(300_000)
  PLAN_CACHE_TTL_MS = 30_000;

  /**
   * How long a verified bearer token is remembered (never past its `exp`); 0
   * verifies every request. A signing key withdrawn from the JWKS stops being
   * accepted within this time.
   */
  @IsInt()
  @Min(0)
  @Max(5000)
  TOKEN_CACHE_TTL_MS = 3000;

  /**
   * `<version>:<base64 32 bytes>,…`: AES-256-GCM key-encryption keys; the highest version
   * encrypts unless STRATA_ENCRYPTION_ACTIVE_KEY names another. Every version that
   * encrypted a stored value must stay until `reencrypt` has moved it (docs/runbooks.md).
   */
  @Secret()
  @IsString()
  @Matches(/^\s*\d+:[A-Za-z0-9+/=]{43,44}(\s*,\s*\d+:[A-Za-z0-9+/=]{43,44})*\s*$/, {
    message: 'must be <version>:<base64 of 32 bytes>[,…]',
  })
  @ValidKeyRing()
  @NotDefaultInProduction(DEVELOPMENT_ENCRYPTION_KEYS)
  STRATA_ENCRYPTION_KEYS = DEVELOPMENT_ENCRYPTION_KEYS;

  /**
   * The key version that encrypts; 0 means the highest in STRATA_ENCRYPTION_KEYS. A new
   * key is first added with this pinned to the current version, so that every replica
   * can read the new version before any replica writes it.
   */
  @IsInt()
  @Min(0)
  @ActiveKeyInRing()
  STRATA_ENCRYPTION_ACTIVE_KEY = 0;

  @IsInt()
  @Min(1)
  RATE_LIMIT_READ_PER_MINUTE = 5000;
  @IsInt()
  @Min(1)
  RATE_LIMIT_WRITE_PER_MINUTE = 1000;
  @IsInt()
  @Min(1)
  RATE_LIMIT_BULK_PER_MINUTE = 100;
  @IsInt()
  @Min(1)
  RATE_LIMIT_EXECUTE_PER_MINUTE = 500;
  /** Permission lookups the services make for a workspace's callers (a budget of its own, not the spec's read). */
  @IsInt()
  @Min(1)
  RATE_LIMIT_LOOKUPS_PER_MINUTE = 5000;
  /** Window of every rate limit, in milliseconds. */
  @IsInt()
  @Min(1000)
  RATE_LIMIT_WINDOW_MS = 60_000;

  /**
   * How long an idle HTTP connection stays open (Node's default is 5 s). The
   * gateway drops its idle upstream sockets before this (it honours the
   * `Keep-Alive: timeout` the service announces), so it never reuses a socket
   * the service is closing.
   */
  @IsInt()
  @Min(1000)
  @Max(600_000)
  HTTP_KEEP_ALIVE_TIMEOUT_MS = 65_000;

  @IsOptional()
  @IsUrl(URL_OPTIONS)
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
}

/** Published in the source: accepted only when STRATA_ENV=development (the function principal's key). */
export const DEVELOPMENT_FUNCTIONS_PRINCIPAL_KEY = 'c3RyYXRhLWRldmVsb3BtZW50LWZ1bmN0aW9ucy1rZXk=';

/** Published in the source: accepted only when STRATA_ENV=development (the first administrator's password). */
export const DEVELOPMENT_ADMIN_PASSWORD = 'strata-admin';
