import { Injectable } from '@nestjs/common';
import type { KeyRing } from '@strata/crypto';
import type { Tx, WorkspaceScope } from '@strata/db';
import { IdempotencyKeys, keyRingOf } from '@strata/platform';
import { canonicalJson } from '../schema/value-check.js';
import { DataConfig } from '../data.config.js';
import { IdempotencyRepository } from './idempotency.repository.js';

export interface StoredResponse<T> {
  readonly status: number;
  readonly body: T;
}

/**
 * `Idempotency-Key`: the first response to a key is stored in the same
 * transaction as the change it made, and a repeat inside the window returns it
 * without running again. Concurrent repeats wait on an advisory lock for the
 * first to finish. Reusing a key for a different request is a 422.
 * `toStore` turns the response into what may be kept (a record's secrets masked:
 * a stored response is neither a place for plaintext at rest nor a way around
 * `secrets:reveal` for whoever repeats the key). The first answer is that kept form too, and
 * the store keeps its JSON text (key order included), so a replay answers the same bytes.
 */
@Injectable()
export class Idempotency {
  private readonly ring: KeyRing;

  constructor(
    private readonly config: DataConfig,
    private readonly repository: IdempotencyRepository,
  ) {
    this.ring = keyRingOf(config);
  }

  async run<T>(
    scope: WorkspaceScope,
    tx: Tx,
    key: string | undefined,
    request: unknown,
    work: () => Promise<StoredResponse<T>>,
    toStore: (body: T) => T = (body) => body,
  ): Promise<StoredResponse<T>> {
    if (key === undefined) return work();
    IdempotencyKeys.check(key);
    const canonical = canonicalJson(request);
    await this.repository.lock(scope, tx, key);
    const stored = await this.repository.find<T>(scope, tx, key, this.config.DATA_IDEMPOTENCY_WINDOW_HOURS);
    if (stored) {
      if (!this.sameRequest(canonical, stored.request_hash)) throw IdempotencyKeys.reused();
      return { status: stored.status, body: stored.response };
    }
    const result = await work();
    const kept = toStore(result.body);
    await this.repository.store(scope, tx, key, this.ring.mac(canonical), result.status, kept);
    // The first answer is the one kept, so that a replay repeats it byte for byte.
    return { status: result.status, body: kept };
  }

  /**
   * The request's fingerprint is keyed (the request may carry secrets: a plain hash
   * of a short one is guessed offline). A fingerprint of a key version since
   * retired cannot be checked: the repeat is taken as the same request. Rows of
   * the previous release hold a plain SHA-256.
   */
  private sameRequest(canonical: string, stored: string): boolean {
    if (/^[0-9a-f]{64}$/.test(stored)) return stored === IdempotencyKeys.fingerprint(canonical);
    return this.ring.verifyMac(canonical, stored) ?? true;
  }
}
