import { IsInt, IsString, IsUrl, Matches, Max, Min } from 'class-validator';
import { IsOptional, ServiceConfig } from '@strata/platform';

const URL = { require_tld: false, require_protocol: true } as const;

/** Gateway settings: its port and where each service answers. */
export class GatewayConfig extends ServiceConfig {
  @IsInt()
  @Min(0)
  @Max(65535)
  GATEWAY_PORT = 8080;

  @IsUrl(URL)
  AUTH_SERVICE_URL = 'http://127.0.0.1:8081';
  @IsUrl(URL)
  DATA_SERVICE_URL = 'http://127.0.0.1:8082';
  @IsUrl(URL)
  COMPUTE_SERVICE_URL = 'http://127.0.0.1:8083';
  /** The sandbox workers, which serve endpoint calls themselves (`/endpoints/{path}`); a Service over them in a cluster. */
  @IsUrl(URL)
  COMPUTE_WORKER_SERVICE_URL = 'http://127.0.0.1:8087';
  @IsUrl(URL)
  ORCHESTRATION_SERVICE_URL = 'http://127.0.0.1:8084';
  @IsUrl(URL)
  WEBHOOKS_SERVICE_URL = 'http://127.0.0.1:8085';
  @IsUrl(URL)
  INBOUND_SERVICE_URL = 'http://127.0.0.1:8086';
  @IsUrl(URL)
  STORAGE_SERVICE_URL = 'http://127.0.0.1:8088';

  /**
   * Idle sockets to the services are closed after this, or 1 s before the
   * keep-alive timeout a service announces when that is sooner, so the gateway
   * never sends a request on a socket the service is closing.
   */
  @IsInt()
  @Min(1000)
  GATEWAY_UPSTREAM_IDLE_TIMEOUT_MS = 60_000;

  /**
   * A host name of their own for endpoint calls (docs/deployment.md, "Endpoints on a host of
   * their own"): a request for that host is answered only on `{data_base}/endpoints/…`, and
   * endpoint calls on any other host are answered 404. Unset: every host serves everything.
   */
  @IsOptional()
  @Matches(/^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/, {
    message: 'must be a host name in lower case, without scheme or port',
  })
  GATEWAY_ENDPOINTS_HOST?: string;

  /** Comma-separated origins allowed by CORS; `*` for any. */
  @IsString()
  CORS_ORIGINS = '*';
}
