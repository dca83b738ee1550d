import type { Request, Response } from 'express';
import { ErrorCode, statusOf, type ErrorBody } from '@strata/contracts';
import { renderError, requestIdOf } from '@strata/platform';
import { addressKey } from './client-address.js';
import type { SignInRefusal } from './sign-in-throttle.service.js';

/** What a refused caller reads: which limit, and how long to wait. */
export function refusalMessage(refusal: SignInRefusal): string {
  const who = refusal.limit === 'account' ? 'this account' : 'this address';
  const seconds = refusal.retryAfterSeconds === 1 ? '1 second' : `${refusal.retryAfterSeconds} seconds`;
  const what = refusal.endpoint === 'login' ? 'sign-ins' : 'client authentications';
  return `Too many failed ${what} for ${who}. Try again in ${seconds}.`;
}

/** The spec's general error body of a 429. */
export function refusalBody(refusal: SignInRefusal, req: Request): ErrorBody {
  return renderError('general', {
    status: statusOf(ErrorCode.RATE_LIMITED),
    code: ErrorCode.RATE_LIMITED,
    message: refusalMessage(refusal),
    requestId: requestIdOf(req),
  });
}

/** Answers 429 with `Retry-After` (seconds) and the general error body. */
export function answerRefusal(req: Request, res: Response, refusal: SignInRefusal): void {
  res
    .status(429)
    .set({ 'Retry-After': String(refusal.retryAfterSeconds), 'Cache-Control': 'no-store' })
    .json(refusalBody(refusal, req));
}

/**
 * The client's address as sign-in limits count it: Express's `req.ip`, which
 * reads `X-Forwarded-For` only through the proxies AUTH_TRUSTED_PROXIES names
 * (from the right: the first hop not trusted is the client), never a value a
 * client wrote itself in front of an untrusted hop.
 */
export function clientAddressOf(req: Request): string | undefined {
  return addressKey(req.ip ?? req.socket.remoteAddress);
}
