import { clientCredentialsToken, type TokenRequestOptions } from '../client.js';

/** Where a client gets the bearer token it sends. */
export interface TokenSource {
  /** A token valid now (a cached one while it lasts). */
  token(): Promise<string>;
  /** Forgets the cached token: the platform refused it (401), so the next `token()` gets a new one. */
  invalidate(): void;
  /** Whether `invalidate` then `token` can give a different token (a refusal is then worth one retry). */
  readonly renewable: boolean;
}

/** A token obtained elsewhere (a user's login, a CI secret): sent as is, never renewed. */
export function staticToken(token: string): TokenSource {
  if (!token) throw new TypeError('staticToken: the token is empty');
  return { token: () => Promise.resolve(token), invalidate: () => undefined, renewable: false };
}

export interface ClientCredentialsOptions extends TokenRequestOptions {
  /** `{auth_url}`, for example https://auth.strata.example.com */
  readonly authUrl: string;
  /** The service account's `ci_…` client id. */
  readonly clientId: string;
  /** The service account's `sk_…` client secret. */
  readonly clientSecret: string;
  readonly scope?: string;
  /** A token is renewed this long before it expires. Default 60 000 ms. */
  readonly renewBeforeMs?: number;
  /** The clock (ms since the epoch), for tests. Default `Date.now`. */
  readonly now?: () => number;
}

/**
 * A service account's tokens from the client-credentials grant, cached until shortly before
 * they expire. Concurrent callers share one token request.
 */
export function clientCredentials(options: ClientCredentialsOptions): TokenSource {
  const now = options.now ?? Date.now;
  const renewBeforeMs = options.renewBeforeMs ?? 60_000;
  let cached: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;

  const fetchToken = async (): Promise<string> => {
    const issued = await clientCredentialsToken(
      options.authUrl,
      options.clientId,
      options.clientSecret,
      options.scope,
      {
        fetch: options.fetch,
        timeoutMs: options.timeoutMs,
      },
    );
    // A lifetime shorter than the margin is renewed at half of it rather than on every call.
    const lifetimeMs = issued.expires_in * 1000;
    const margin = Math.min(renewBeforeMs, lifetimeMs / 2);
    cached = { token: issued.access_token, renewAt: now() + lifetimeMs - margin };
    return issued.access_token;
  };

  return {
    renewable: true,
    token() {
      if (cached && now() < cached.renewAt) return Promise.resolve(cached.token);
      pending ??= fetchToken().finally(() => {
        pending = undefined;
      });
      return pending;
    },
    invalidate() {
      cached = undefined;
    },
  };
}
