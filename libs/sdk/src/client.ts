/** Where the platform answers; the CLI reads them from STRATA_BASE_URL / STRATA_AUTH_URL. */
export interface StrataUrls {
  readonly baseUrl: string;
  readonly authUrl: string;
}

export const DEFAULT_URLS: StrataUrls = { baseUrl: 'http://localhost:8080', authUrl: 'http://localhost:8081' };

export interface ClientCredentialsToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope?: string;
}

/** How the token request is sent: another fetch (a proxy's), and how long it may take. */
export interface TokenRequestOptions {
  readonly fetch?: typeof fetch | undefined;
  /** Default 30 000 ms. */
  readonly timeoutMs?: number | undefined;
}

/** The client-credentials grant at `{auth_url}/oidc/token` (form-encoded). */
export async function clientCredentialsToken(
  authUrl: string,
  clientId: string,
  clientSecret: string,
  scope?: string,
  options: TokenRequestOptions = {},
): Promise<ClientCredentialsToken> {
  const res = await (options.fetch ?? fetch)(`${authUrl.replace(/\/$/, '')}/oidc/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
      ...(scope ? { scope } : {}),
    }).toString(),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  });
  // An ingress in front of auth may answer HTML (a 502 page): the status is what to report then.
  const text = await res.text();
  let body: Partial<ClientCredentialsToken> & { error?: string; error_description?: string } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // not JSON
  }
  if (!res.ok)
    throw new Error(`token request failed (${res.status}): ${body.error ?? ''} ${body.error_description ?? ''}`.trim());
  if (typeof body.access_token !== 'string' || typeof body.expires_in !== 'number') {
    throw new Error(`token request failed (${res.status}): the answer holds no access_token and expires_in`);
  }
  return body as ClientCredentialsToken;
}
