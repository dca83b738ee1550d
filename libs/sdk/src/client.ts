import { StrataApiError } from './http/api-error.js';

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

/** The client-credentials grant at `{auth_url}/oidc/token` (form-encoded); a refusal throws StrataApiError (`code` the OAuth `error`). */
export async function clientCredentialsToken(
  authUrl: string,
  clientId: string,
  clientSecret: string,
  scope?: string,
  options: TokenRequestOptions = {},
): Promise<ClientCredentialsToken> {
  const url = `${authUrl.replace(/\/$/, '')}/oidc/token`;
  const res = await (options.fetch ?? fetch)(url, {
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
  const refuse = (message: string) => {
    const retryAfter = Number(res.headers.get('retry-after') ?? Number.NaN);
    return new StrataApiError(
      res.status,
      body.error,
      message,
      undefined,
      res.headers.get('x-request-id') ?? undefined,
      text.length > 0 ? (Object.keys(body).length > 0 ? body : text) : undefined,
      Number.isFinite(retryAfter) ? retryAfter : undefined,
      'POST',
      url,
    );
  };
  if (!res.ok) {
    const said = [body.error, body.error_description].filter((part) => typeof part === 'string' && part !== '');
    throw refuse(`token request failed (${res.status})${said.length ? `: ${said.join(' ')}` : ''}`);
  }
  if (typeof body.access_token !== 'string' || typeof body.expires_in !== 'number') {
    throw refuse(`token request failed (${res.status}): the answer holds no access_token and expires_in`);
  }
  return body as ClientCredentialsToken;
}
