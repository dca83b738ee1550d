/** Who is calling: a user, a service account, or a publishable key. */
export type PrincipalType = 'user' | 'service_account' | 'publishable_key';

export type Credential =
  { readonly kind: 'bearer'; readonly token: string } | { readonly kind: 'publishable_key'; readonly key: string };

export interface Principal {
  readonly type: PrincipalType;
  /** User id, client id, or publishable key prefix. */
  readonly id: string;
  /** The workspace the credential is bound to; absent for a user token issued before any workspace was chosen. */
  readonly workspace: string | undefined;
  readonly groups: readonly string[];
  /** OAuth scopes of a bearer token (space-separated `scope` claim). */
  readonly scopes: readonly string[];
  readonly credential: Credential;
  /** When a bearer token stops being valid (its `exp`, epoch seconds). */
  readonly expiresAt?: number;
}

/** Claims of a Strata access token. */
export interface AccessTokenClaims {
  sub: string;
  iss: string;
  aud: string | string[];
  iat: number;
  exp: number;
  workspace?: string;
  isServiceAccount: 'true' | 'false';
  groups?: string[];
  scope?: string;
}
