import { Injectable } from '@nestjs/common';
import type { Tx, WorkspaceScope } from '@strata/db';
import { IdempotencyKeys } from '@strata/platform';
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
 */
@Injectable()
export class Idempotency {
  constructor(
    private readonly config: DataConfig,
    private readonly repository: IdempotencyRepository,
  ) {}

  async run<T>(
    scope: WorkspaceScope,
    tx: Tx,
    key: string | undefined,
    request: unknown,
    work: () => Promise<StoredResponse<T>>,
  ): Promise<StoredResponse<T>> {
    if (key === undefined) return work();
    IdempotencyKeys.check(key);
    const hash = IdempotencyKeys.fingerprint(canonicalJson(request));
    await this.repository.lock(scope, tx, key);
    const stored = await this.repository.find<T>(scope, tx, key, this.config.DATA_IDEMPOTENCY_WINDOW_HOURS);
    if (stored) {
      if (stored.request_hash !== hash) {
        throw IdempotencyKeys.reused();
      }
      return { status: stored.status, body: stored.response };
    }
    const result = await work();
    await this.repository.store(scope, tx, key, hash, result.status, result.body);
    return result;
  }
}
