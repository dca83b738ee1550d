/** Who a subscription acts for: the principal that created it (docs/webhooks.md). */
export interface SubscriptionOwner {
  readonly type: 'user' | 'service_account';
  readonly id: string;
}

/**
 * The owner recorded with a subscription. Rows written before the owner's type
 * was recorded (and by a replica of an older version during a rollout) have
 * only the id: a service account's is its client id (`ci_…`), a user's a uuid.
 */
export function ownerOf(createdBy: string, createdByType: string | null): SubscriptionOwner {
  if (createdByType === 'user' || createdByType === 'service_account') return { type: createdByType, id: createdBy };
  return { type: createdBy.startsWith('ci_') ? 'service_account' : 'user', id: createdBy };
}

/** A subscription row as stored. */
export interface SubscriptionRow {
  id: string;
  workspace_slug: string;
  name: string;
  url: string;
  events: string[];
  record_slugs: string[] | null;
  active: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_valid_until: Date | null;
  created_by: string;
  /** `user` or `service_account`; null on a row an older version wrote ({@link ownerOf}). */
  created_by_type: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

/** A subscription as the API answers it; `secret` only on create and rotation. */
export interface Subscription {
  id: string;
  name: string;
  url: string;
  events: string[];
  /** Collection slugs; empty means every collection. */
  recordSlugs: string[];
  active: boolean;
  /** When the previous secret stops signing (24 hours after a rotation), else null. */
  previousSecretValidUntil: string | null;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  secret?: string;
}

/** The API form of a row; `now` (the service's clock) decides whether the rotation grace still lasts. */
export function toSubscription(row: SubscriptionRow, now: Date, secret?: string): Subscription {
  const graceActive = row.previous_secret_valid_until && row.previous_secret_valid_until > now;
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    events: row.events,
    recordSlugs: row.record_slugs ?? [],
    active: row.active,
    previousSecretValidUntil: graceActive ? row.previous_secret_valid_until!.toISOString() : null,
    createdBy: row.created_by,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    ...(secret !== undefined ? { secret } : {}),
  };
}
