import { ErrorCode } from '@strata/contracts';
import { StrataException } from '@strata/platform';
import { suspensionMessage, type SuspensionPolicy } from './lost-isolates.js';

/** The 429 a request that would start a run of a suspended workspace gets, with `Retry-After` at its end. */
export function suspensionRefusal(until: Date, policy: SuspensionPolicy, now: Date): StrataException {
  return new StrataException(ErrorCode.RATE_LIMITED, suspensionMessage(until, policy), undefined, {
    'Retry-After': String(Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000))),
  });
}
