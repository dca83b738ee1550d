/**
 * What an endpoint function's answer may carry. Its answer is a tenant's
 * content served from the API's own host (where `/docs` and every other
 * workspace's API live), so the platform, not the function, decides what a
 * browser may do with it (docs/compute.md, "What an endpoint may answer").
 */

/**
 * Headers every answer on an endpoint path carries (errors too): the page is a
 * sandbox with an origin of its own (no script runs as the API's origin, no
 * cookie or storage of it is reached), and its type is the one it declares.
 */
export const ENDPOINT_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': 'sandbox',
  'x-content-type-options': 'nosniff',
};

/**
 * Headers a function cannot set, because they act beyond its own answer:
 * `Clear-Site-Data: "cookies"` clears the cookies of the whole registrable
 * domain (every host of `example.com`), `Service-Worker-Allowed` widens the
 * scope a service worker of the host could take.
 */
export const REFUSED_HEADERS: ReadonlySet<string> = new Set(['clear-site-data', 'service-worker-allowed']);

/** Where an endpoint's cookies may go: its trigger's opt-in, and the path they are kept under. */
export interface CookiePolicy {
  /** The trigger's `allowCookies`: without it no `Set-Cookie` reaches the caller. */
  readonly allowed: boolean;
  /** `/data/workspace/{workspace}/api/v1/endpoints`: another workspace's calls never carry them. */
  readonly path: string;
}

/** The cookie path of a workspace's endpoints (its calls are `{path}/{endpoint path}`). */
export function endpointCookiePath(workspace: string): string {
  return `/data/workspace/${workspace}/api/v1/endpoints`;
}

/**
 * The `Set-Cookie` value to send for what the function set, or undefined to
 * send none: a host-only cookie (any `Domain` attribute removed, so it never
 * reaches a parent domain or a sibling host) kept to the workspace's endpoints
 * (a `Path` outside them is replaced by theirs, so the other workspaces'
 * calls and the rest of the API never carry it). Other attributes are kept.
 */
export function acceptedCookie(value: string, policy: CookiePolicy): string | undefined {
  if (!policy.allowed) return undefined;
  const [pair, ...attributes] = value.split(';');
  const kept: string[] = [];
  for (const attribute of attributes) {
    const at = attribute.indexOf('=');
    const name = (at < 0 ? attribute : attribute.slice(0, at)).trim().toLowerCase();
    const argument = at < 0 ? '' : attribute.slice(at + 1).trim();
    if (name === 'domain') continue;
    if (name === 'path') {
      // A path that does not start with `/` is the default path (RFC 6265 5.2.4): under the endpoint already.
      if (argument.startsWith('/') && !pathWithin(argument, policy.path)) {
        kept.push(` Path=${policy.path}`);
        continue;
      }
    }
    if (name !== '') kept.push(attribute);
  }
  return [pair!, ...kept].join(';');
}

/** Whether a cookie with path `path` is sent only to requests under `base` (RFC 6265 5.1.4, path-match). */
function pathWithin(path: string, base: string): boolean {
  return path === base || path.startsWith(`${base}/`);
}

/**
 * Whether a `Location` the function set is sent: a relative reference or an
 * http(s) URL, on any host. A redirect elsewhere is the function's to give (a
 * sign-in flow's return, a short link), as any web application gives one;
 * other schemes (`javascript:`, `data:`) are no redirect a browser should be
 * told to follow, and are left out.
 */
export function acceptedLocation(value: string): boolean {
  try {
    const { protocol } = new URL(value, 'http://endpoint.invalid/');
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * The `Content-Security-Policy` to send: the platform's `sandbox`, and the
 * function's own policy beside it when it set one (a browser enforces both, so
 * it can only add restrictions).
 */
export function contentSecurityPolicy(own: string | undefined): string | string[] {
  const sandbox = ENDPOINT_SECURITY_HEADERS['content-security-policy']!;
  return own === undefined || own.trim() === '' ? sandbox : [sandbox, own];
}
