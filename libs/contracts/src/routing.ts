/**
 * The one routing table of the public entry points. The gateway routes with it,
 * under `npm start` and in a cluster, where the Helm chart's Ingress sends
 * `{base_url}` to the gateway (docs/deployment.md, "Routing").
 *
 * `{base_url}` paths carry the service prefix; `{auth_url}` is a host of its own.
 */
export type ServiceName =
  'auth' | 'data' | 'compute' | 'compute-worker' | 'orchestration' | 'webhooks' | 'inbound' | 'storage';

export interface Route {
  /** The service that answers. */
  readonly service: ServiceName;
  /** A regular expression source matched against the request path (no query string). */
  readonly pattern: string;
  /**
   * A deprecated variant: the gateway rewrites the path to `rewrite` (with `$1`… groups)
   * and the service answers with the deprecation headers.
   */
  readonly rewrite?: string;
  readonly note: string;
}

const WS = '([a-z0-9]+(?:-[a-z0-9]+)*)';
const DATA_BASE = `^/data/workspace/${WS}/api/v1`;

/** First path segments under `{data_base}` that belong to a service other than data. */
export const DATA_BASE_SEGMENTS: Readonly<Record<string, ServiceName>> = {
  'compute-functions': 'compute',
  drafts: 'compute',
  'function-triggers': 'compute',
  'function-runs': 'compute',
  // Endpoint calls wait for their function: the sandbox workers serve them, with no hop between processes.
  endpoints: 'compute-worker',
  'webhook-subscriptions': 'webhooks',
  'inbound-events': 'inbound',
  'http-trigger': 'inbound',
  webhook: 'inbound',
};

/** Ordered: the first match wins. */
export const ROUTES: readonly Route[] = [
  { service: 'auth', pattern: '^/workspace/api/v1(?:/|$)', note: 'workspace management' },
  {
    service: 'auth',
    pattern: `^/iam/workspace/${WS}/api/v1/(.*)$`,
    rewrite: '/workspace/$1/api/v1/$2',
    note: 'older IAM path on {base_url}; the primary is {auth_url}/workspace/{workspace}/api/v1',
  },
  ...Object.entries(DATA_BASE_SEGMENTS).map(([segment, service]): Route => ({
    service,
    pattern: `${DATA_BASE}/${segment}(?:/|$)`,
    note: `{data_base}/${segment}`,
  })),
  { service: 'data', pattern: `${DATA_BASE}(?:/|$)`, note: '{data_base}: collections, records, queries' },
  { service: 'storage', pattern: `^/storage/workspace/${WS}/api/v1(?:/|$)`, note: '{storage_base}: files and buckets' },
  { service: 'orchestration', pattern: `^/orchestration/ws/${WS}/api/v1(?:/|$)`, note: '{orch_base}' },
  {
    service: 'orchestration',
    pattern: `^/orchestration/workspace/${WS}/api/v1(/.*)?$`,
    rewrite: '/orchestration/ws/$1/api/v1$2',
    note: 'older orchestration base',
  },
  {
    service: 'orchestration',
    pattern: `^/orchestration/api/v1/workspaces/${WS}(/.*)?$`,
    rewrite: '/orchestration/ws/$1/api/v1$2',
    note: 'older orchestration base',
  },
];

export interface RouteMatch {
  readonly route: Route;
  /** The path the service receives (rewritten for deprecated variants). */
  readonly path: string;
  readonly deprecated: boolean;
}

const compiled = ROUTES.map((route) => ({ route, re: new RegExp(route.pattern) }));

/** Finds the service for a `{base_url}` path, or undefined for an unknown path. */
export function matchRoute(path: string): RouteMatch | undefined {
  for (const { route, re } of compiled) {
    const m = re.exec(path);
    if (!m) continue;
    if (route.rewrite === undefined) return { route, path, deprecated: false };
    const rewritten = route.rewrite.replace(/\$(\d)/g, (_, i: string) => m[Number(i)] ?? '');
    return { route, path: rewritten, deprecated: true };
  }
  return undefined;
}

/** Default local ports; every one is overridable by configuration. */
export const DEFAULT_PORTS: Readonly<Record<ServiceName | 'gateway', number>> = {
  gateway: 8080,
  auth: 8081,
  data: 8082,
  compute: 8083,
  orchestration: 8084,
  webhooks: 8085,
  inbound: 8086,
  'compute-worker': 8087,
  storage: 8088,
};
