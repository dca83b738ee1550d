export interface Workspace {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  readonly description: string;
  readonly createdBy: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface ServiceAccount {
  readonly id: number;
  /** `ci_…`: the token request's client id, and the member id in groups. */
  readonly clientId: string;
  readonly name: string;
  readonly description: string;
  readonly workspace: string;
  readonly grant_types: string[];
  readonly scope: string;
  readonly status: 'active' | 'revoked';
  readonly createdAt: string;
  readonly createdBy: string;
  readonly updatedAt: string;
  readonly revokedAt: string | null;
}

/** On create and rotation only: the `sk_…` secret, never readable again. */
export interface ServiceAccountWithSecret extends ServiceAccount {
  readonly clientSecret: string;
}

export interface ServiceAccountInput {
  readonly name: string;
  readonly description?: string;
  readonly grant_types?: readonly string[];
  /** Space-separated; default `openid`. Add `webhooks:replay`, `webhooks:cancel` for those operations. */
  readonly scope?: string;
}

export interface Policy {
  readonly id: string;
  /** A resource name (`records`, `compute-functions`…) or `*`. */
  readonly resource: string;
  readonly actions: string[];
  /** `records` only: the collection slugs the actions apply to; null for every collection. */
  readonly collections: string[] | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** What the policy holds that grants nothing (`read`); absent when none. */
  readonly warnings?: { field: string; message: string }[];
}

export interface GroupMember {
  readonly type: 'user' | 'service_account';
  readonly id: string;
  readonly addedAt: string;
}

export interface Group {
  readonly id: string;
  readonly workspace: string;
  readonly name: string;
  readonly description: string;
  readonly policies: Policy[];
  readonly members: GroupMember[];
  readonly createdAt: string;
  readonly updatedAt: string;
}
