import { ErrorCode } from '@strata/contracts';
import { StrataException } from '@strata/platform';

/** The 429 a request that would start a refused run gets, with `Retry-After` at the refusal's end. */
export function refusalException(refusal: { readonly until: Date; readonly message: string }, now: Date) {
  return new StrataException(ErrorCode.RATE_LIMITED, refusal.message, undefined, {
    'Retry-After': String(Math.max(1, Math.ceil((refusal.until.getTime() - now.getTime()) / 1000))),
  });
}
