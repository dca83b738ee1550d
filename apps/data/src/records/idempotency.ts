import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { KeyRing } from '@strata/crypto';
import { IdempotencyKeys, keyRingOf } from '@strata/platform';
import { canonicalJson } from '../schema/value-check.js';
import { DataConfig } from '../data.config.js';

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
 * `secrets:reveal` for whoever repeats the key).
 */
@Injectable()
export class Idempotency {
  private readonly ring: KeyRing;

  constructor(private readonly config: DataConfig) {
    this.ring = keyRingOf(config);
  }

  async run<T>(
    tx: EntityManager,
    workspace: string,
    key: string | undefined,
    request: unknown,
    work: () => Promise<StoredResponse<T>>,
    toStore: (body: T) => T = (body) => body,
  ): Promise<StoredResponse<T>> {
    if (key === undefined) return work();
    IdempotencyKeys.check(key);
    const canonical = canonicalJson(request);
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`data-idempotency:${workspace}:${key}`]);
    const [stored] = await tx.query<{ request_hash: string; status: number; response: T }[]>(
      `SELECT request_hash, status, response FROM data.idempotency_keys
        WHERE workspace_slug = $1 AND key = $2 AND created_at > now() - make_interval(hours => $3)`,
      [workspace, key, this.config.DATA_IDEMPOTENCY_WINDOW_HOURS],
    );
    if (stored) {
      if (!this.sameRequest(canonical, stored.request_hash)) throw IdempotencyKeys.reused();
      return { status: stored.status, body: stored.response };
    }
    const result = await work();
    await tx.query(
      `INSERT INTO data.idempotency_keys (workspace_slug, key, request_hash, status, response) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (workspace_slug, key) DO UPDATE SET request_hash = $3, status = $4, response = $5, created_at = now()`,
      [workspace, key, this.ring.mac(canonical), result.status, JSON.stringify(toStore(result.body))],
    );
    return result;
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
