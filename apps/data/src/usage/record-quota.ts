import { Injectable } from '@nestjs/common';
import type { Tx, WorkspaceScope } from '@strata/db';
import { quotaRefusal, WorkspacePlans } from '@strata/platform';
import { UsageRepository } from './usage.repository.js';

/**
 * Whether new records fit the workspace's plan (docs/plans.md): `records`
 * more live records and about `bytes` more stored data. Refuses with the
 * records API's 429 `QUOTA_EXCEEDED`. The counters are read, never locked:
 * concurrent creates may pass a limit together by what they add (documented).
 */
@Injectable()
export class RecordQuota {
  constructor(
    private readonly plans: WorkspacePlans,
    private readonly usage: UsageRepository,
  ) {}

  async ensureRoom(scope: WorkspaceScope, records: number, bytes: number, tx?: Tx): Promise<void> {
    const plan = await this.plans.planOf(scope);
    if (!plan || (plan.limits.records === null && plan.limits.storageBytes === null)) return;
    const held = await this.usage.usage(scope, tx);
    const refusal =
      quotaRefusal(plan, 'records', held.records, records) ??
      quotaRefusal(plan, 'storageBytes', held.storageBytes, bytes);
    if (refusal) throw refusal;
  }
}

/** About how many bytes records' data take (their JSON), for the storage check before they are written. */
export function bytesOf(data: readonly unknown[]): number {
  let bytes = 0;
  for (const d of data) bytes += Buffer.byteLength(JSON.stringify(d ?? null));
  return bytes;
}
