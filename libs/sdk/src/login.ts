import { createHash, randomBytes } from 'node:crypto';

export interface PasswordLoginOptions {
  /** `{auth_url}`, for example http://localhost:8081 */
  readonly authUrl: string;
  readonly email: string;
  readonly password: string;
  readonly workspace?: string | undefined;
  readonly clientId?: string;
  readonly redirectUri?: string;
}

export interface UserTokens {
  readonly accessToken: string;
  readonly idToken: string | undefined;
  readonly expiresIn: number;
}

export class LoginError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'LoginError';
  }
}

/** A minimal cookie jar: the login flow only needs name=value pairs on one host. */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      if (eq > 0) this.cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * Logs a user in without a browser: the authorization-code flow with PKCE,
 * answering the login page the way the browser form would, then the code
 * exchange. Returns the user's access token.
 */
export async function loginWithPassword(options: PasswordLoginOptions): Promise<UserTokens> {
  const base = options.authUrl.replace(/\/$/, '');
  const clientId = options.clientId ?? 'strata-cli';
  const redirectUri = options.redirectUri ?? 'http://127.0.0.1/callback';
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const state = randomBytes(16).toString('base64url');
  const jar = new CookieJar();

  const authorize = new URL(`${base}/oidc/auth`);
  authorize.search = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: redirectUri,
    scope: 'openid',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    ...(options.workspace ? { workspace: options.workspace } : {}),
  }).toString();

  let res = await step(authorize.toString(), jar);
  const interaction = location(res, base);
  if (!/\/interaction\/[^/]+$/.test(new URL(interaction).pathname)) {
    throw new LoginError(`unexpected redirect from the authorization endpoint: ${interaction}`, res.status);
  }
  await step(interaction, jar);

  res = await step(`${interaction}/login`, jar, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      email: options.email,
      password: options.password,
      workspace: options.workspace ?? '',
    }).toString(),
  });
  if (res.status !== 303 && res.status !== 302) {
    const text = await res.text();
    const message = /role="alert">([^<]*)</.exec(text)?.[1] ?? `login failed with status ${res.status}`;
    throw new LoginError(message.replace(/&#39;/g, "'"), res.status);
  }
  // Follow the provider's redirects until it sends us to the redirect URI with a code.
  let next = location(res, base);
  for (let hops = 0; hops < 5 && !next.startsWith(redirectUri); hops++) {
    res = await step(next, jar);
    next = location(res, base);
  }
  const callback = new URL(next);
  if (callback.searchParams.get('state') !== state)
    throw new LoginError('state mismatch in the authorization response');
  const error = callback.searchParams.get('error');
  if (error) throw new LoginError(`${error}: ${callback.searchParams.get('error_description') ?? ''}`);
  const code = callback.searchParams.get('code');
  if (!code) throw new LoginError('no authorization code in the response');

  const token = await fetch(`${base}/oidc/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: clientId,
      code_verifier: verifier,
    }).toString(),
  });
  const body = (await token.json()) as {
    access_token?: string;
    id_token?: string;
    expires_in?: number;
    error?: string;
    error_description?: string;
  };
  if (!token.ok || !body.access_token)
    throw new LoginError(
      `token exchange failed: ${body.error ?? token.status} ${body.error_description ?? ''}`.trim(),
      token.status,
    );
  return { accessToken: body.access_token, idToken: body.id_token, expiresIn: body.expires_in ?? 0 };
}

async function step(url: string, jar: CookieJar, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(url, {
    ...init,
    redirect: 'manual',
    headers: { ...(init.headers as Record<string, string>), cookie: jar.header() },
  });
  jar.store(res);
  return res;
}

function location(res: Response, base: string): string {
  const value = res.headers.get('location');
  if (!value) throw new LoginError(`expected a redirect, got status ${res.status}`, res.status);
  return new URL(value, base).toString();
}
