import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { isStorableId } from '../oidc/oauth-input.js';
import type { ServiceAccountsService } from '../service-accounts/service-accounts.service.js';
import { answerRefusal, clientAddressOf } from './sign-in-refusal.js';
import type { SignInThrottle } from './sign-in-throttle.service.js';

/** The client id and secret of a token request: the form's (client_secret_post), else a Basic header's. */
export function clientCredentialsOf(req: Request): { clientId?: string; secret?: string } {
  const body = (req.body ?? {}) as Record<string, unknown>;
  if (typeof body['client_id'] === 'string') {
    return {
      clientId: body['client_id'],
      ...(typeof body['client_secret'] === 'string' ? { secret: body['client_secret'] } : {}),
    };
  }
  const header = req.headers.authorization;
  if (!header || !/^basic /i.test(header)) return {};
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return {};
  try {
    const form = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { clientId: form(decoded.slice(0, colon)), secret: form(decoded.slice(colon + 1)) };
  } catch {
    return {};
  }
}

/**
 * Guards the client-credentials grant of `/oidc/token` against secret guessing
 * (docs/identity.md, "Guessing"), before oidc-provider runs: an address that
 * must wait is answered 429 at once; otherwise the secret is checked as the
 * provider will check it. The right secret clears the client's failures; a
 * wrong one is answered 429 while the client must wait, else counted (for the
 * client and the address) before the provider answers 401, so the next request
 * already sees it. Other grants pass through.
 */
export function tokenThrottle(throttle: SignInThrottle, accounts: ServiceAccountsService): RequestHandler {
  const guard = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (req.method !== 'POST' || body['grant_type'] !== 'client_credentials') return next();
    const { clientId: presented, secret } = clientCredentialsOf(req);
    // An id that could not be stored names no client; it is counted by its address alone.
    const clientId = presented !== undefined && isStorableId(presented) ? presented : undefined;
    const address = clientAddressOf(req);
    const busy = await throttle.tokenAddressRefusal(address);
    if (busy) return answerRefusal(req, res, busy);
    const valid = clientId !== undefined && secret !== undefined && (await accounts.authenticates(clientId, secret));
    if (valid) {
      await throttle.tokenSucceeded(clientId);
      return next();
    }
    const locked = await throttle.tokenClientRefusal(clientId);
    if (locked) return answerRefusal(req, res, locked);
    await throttle.tokenFailed(clientId, address);
    next();
  };
  return (req, res, next) => {
    guard(req, res, next).catch(next);
  };
}
