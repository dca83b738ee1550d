import { randomBytes, randomUUID } from 'node:crypto';
import { freshRandomBytes } from './random.js';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export function newUuid(): string {
  return randomUUID();
}

/** `ci_` + 24 hex characters. */
export function newClientId(): string {
  return `ci_${randomBytes(12).toString('hex')}`;
}

/** `sk_` + 64 hex characters. */
export function newClientSecret(): string {
  return `sk_${randomBytes(32).toString('hex')}`;
}

/** `pk_live_` + 43 base64url characters (256 bits). */
export function newPublishableKey(): string {
  return `pk_live_${randomBytes(32).toString('base64url')}`;
}

/**
 * A 20-character sortable id: 10 Crockford base32 characters of milliseconds
 * since the epoch (good until the year 36812) then 10 of randomness (50 bits).
 */
export function newSortableId(now: number = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32]! + time;
    t = Math.floor(t / 32);
  }
  const bytes = freshRandomBytes(10);
  let random = '';
  for (const byte of bytes) random += CROCKFORD[byte % 32];
  return time + random;
}

export const newOrchestrationId = (): string => `orch_${newSortableId()}`;
export const newOrchestrationRunId = (): string => `orun_${newSortableId()}`;
export const newOrchestrationStepId = (): string => `ostep_${newSortableId()}`;
export const newInboundEventId = (): string => `ievt_${newSortableId()}`;
