export const VISIBILITIES = ['private', 'public'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

/** The implicit bucket of every workspace. */
export const DEFAULT_BUCKET = 'default';

/** A bucket as stored (its link key sealed). */
export interface BucketRow {
  readonly workspace: string;
  readonly name: string;
  readonly maxFileBytes: number;
  readonly allowedTypes: readonly string[];
  readonly defaultVisibility: Visibility;
  /** The signed-link key, sealed with the key ring (bound to the workspace and bucket). */
  readonly linkKey: string;
  /** The key-ring version that sealed it (what a re-encryption looks for). */
  readonly linkKeyVersion: number;
  readonly linkKeyRotatedAt: Date;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** What a bucket's settings change to. */
export interface BucketSettings {
  readonly maxFileBytes: number;
  readonly allowedTypes: readonly string[];
  readonly defaultVisibility: Visibility;
}
