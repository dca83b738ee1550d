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

/** The client-credentials grant at `{auth_url}/oidc/token` (form-encoded). */
export async function clientCredentialsToken(
  authUrl: string,
  clientId: string,
  clientSecret: string,
  scope?: string,
): Promise<ClientCredentialsToken> {
  const res = await fetch(`${authUrl.replace(/\/$/, '')}/oidc/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
      ...(scope ? { scope } : {}),
    }).toString(),
  });
  const body = (await res.json()) as ClientCredentialsToken & { error?: string; error_description?: string };
  if (!res.ok)
    throw new Error(`token request failed (${res.status}): ${body.error ?? ''} ${body.error_description ?? ''}`.trim());
  return body;
}
