import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { associatedData, KeyRing, SEAL_PURPOSES, type Binding } from '@strata/crypto';
import type { Tx, WorkspaceScope } from '@strata/db';
import { Clock, keyRingOf, StrataException } from '@strata/platform';
import { StorageConfig } from '../storage.config.js';
import { BucketsRepository } from './buckets.repository.js';
import { DEFAULT_BUCKET, type BucketRow } from './bucket.types.js';
import type { CreateBucketRequest, UpdateBucketRequest } from './dto/bucket.requests.js';
import { ANY_TYPE } from './type-allowlist.js';

export const BUCKET_NOT_FOUND = 'Bucket not found.';

/** A bucket as the API shows it (never its link key). */
export interface BucketView {
  readonly workspace: string;
  readonly name: string;
  readonly maxFileBytes: number;
  readonly allowedTypes: readonly string[];
  readonly defaultVisibility: string;
  readonly linkKeyRotatedAt: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export function bucketView(b: BucketRow): BucketView {
  return {
    workspace: b.workspace,
    name: b.name,
    maxFileBytes: b.maxFileBytes,
    allowedTypes: b.allowedTypes,
    defaultVisibility: b.defaultVisibility,
    linkKeyRotatedAt: b.linkKeyRotatedAt.toISOString(),
    createdAt: b.createdAt.toISOString(),
    updatedAt: b.updatedAt.toISOString(),
  };
}

/** Where a bucket's link key is sealed: its workspace and name. */
function linkKeyBinding(workspace: string, bucket: string): Binding {
  return { aad: associatedData(SEAL_PURPOSES.storageLinkKey, workspace, bucket), legacy: [] };
}

/**
 * Buckets: their settings, the implicit `default` bucket (made on first use with the
 * configured defaults), and each bucket's signed-link key, sealed at rest with the key
 * ring and replaced by a rotation (which revokes every link signed with it).
 */
@Injectable()
export class BucketsService {
  private readonly ring: KeyRing;

  constructor(
    private readonly buckets: BucketsRepository,
    private readonly config: StorageConfig,
    private readonly clock: Clock,
  ) {
    this.ring = keyRingOf(config);
  }

  async create(scope: WorkspaceScope, body: CreateBucketRequest): Promise<BucketView> {
    const row = this.newBucket(scope, body.name, body);
    if (!(await this.buckets.insert(scope, undefined, row))) {
      throw StrataException.conflict(`A bucket named '${body.name}' already exists.`);
    }
    return bucketView({ ...row, workspace: scope.workspace });
  }

  async list(scope: WorkspaceScope): Promise<{ results: BucketView[] }> {
    await this.require(scope, undefined, DEFAULT_BUCKET);
    return { results: (await this.buckets.list(scope)).map(bucketView) };
  }

  async get(scope: WorkspaceScope, name: string): Promise<BucketView> {
    return bucketView(await this.require(scope, undefined, name));
  }

  async update(scope: WorkspaceScope, name: string, body: UpdateBucketRequest): Promise<BucketView> {
    const current = await this.require(scope, undefined, name);
    this.checkSize(body.maxFileBytes);
    const updated = await this.buckets.update(
      scope,
      name,
      {
        maxFileBytes: body.maxFileBytes ?? current.maxFileBytes,
        allowedTypes: body.allowedTypes ?? current.allowedTypes,
        defaultVisibility: body.defaultVisibility ?? current.defaultVisibility,
      },
      this.clock.now(),
    );
    if (!updated) throw StrataException.notFound(BUCKET_NOT_FOUND);
    return bucketView(updated);
  }

  /** A new link key: every link signed with the old one is refused from now on. */
  async rotateLinkKey(scope: WorkspaceScope, name: string): Promise<BucketView> {
    await this.require(scope, undefined, name);
    const sealed = this.ring.seal(randomBytes(32), linkKeyBinding(scope.workspace, name));
    const rotated = await this.buckets.replaceLinkKey(scope, name, sealed, KeyRing.versionOf(sealed), this.clock.now());
    if (!rotated) throw StrataException.notFound(BUCKET_NOT_FOUND);
    return bucketView(rotated);
  }

  /** The bucket, the `default` one made when it does not exist yet; 404 for another missing one. */
  async require(scope: WorkspaceScope, tx: Tx | undefined, name: string): Promise<BucketRow> {
    let found = await this.buckets.find(scope, tx, name);
    if (!found && name === DEFAULT_BUCKET) {
      await this.ensureDefault(scope, tx);
      found = await this.buckets.find(scope, tx, name);
    }
    if (!found) throw StrataException.notFound(BUCKET_NOT_FOUND);
    return found;
  }

  /** The bucket's link key, opened. */
  linkKeyOf(bucket: BucketRow): Buffer {
    return this.ring.unseal(bucket.linkKey, linkKeyBinding(bucket.workspace, bucket.name)).plaintext;
  }

  private async ensureDefault(scope: WorkspaceScope, tx?: Tx): Promise<void> {
    await this.buckets.insert(scope, tx, this.newBucket(scope, DEFAULT_BUCKET, {}));
  }

  private newBucket(scope: WorkspaceScope, name: string, body: UpdateBucketRequest): Omit<BucketRow, 'workspace'> {
    this.checkSize(body.maxFileBytes);
    const now = this.clock.now();
    const sealed = this.ring.seal(randomBytes(32), linkKeyBinding(scope.workspace, name));
    return {
      name,
      maxFileBytes: body.maxFileBytes ?? this.config.STORAGE_DEFAULT_BUCKET_MAX_FILE_BYTES,
      allowedTypes: body.allowedTypes ?? [ANY_TYPE],
      defaultVisibility: body.defaultVisibility ?? 'private',
      linkKey: sealed,
      linkKeyVersion: KeyRing.versionOf(sealed),
      linkKeyRotatedAt: now,
      createdAt: now,
      updatedAt: now,
    };
  }

  private checkSize(maxFileBytes: number | undefined): void {
    if (maxFileBytes !== undefined && maxFileBytes > this.config.STORAGE_MAX_FILE_BYTES) {
      throw StrataException.invalid(
        'maxFileBytes',
        `maxFileBytes must be at most ${this.config.STORAGE_MAX_FILE_BYTES} (STORAGE_MAX_FILE_BYTES)`,
      );
    }
  }
}
