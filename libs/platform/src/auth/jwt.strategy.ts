import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { createPublicKey, type KeyObject } from 'node:crypto';
import { createRemoteJWKSet, decodeProtectedHeader, exportSPKI } from 'jose';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { ServiceConfig } from '../config/service-config.js';
import { StrataException } from '../errors/strata.exception.js';
import type { AccessTokenClaims, Principal } from './principal.js';

export const JWT_STRATEGY = 'strata-jwt';

/**
 * Verifies bearer tokens locally: signature against the auth service's JWKS
 * (cached; an unknown `kid` triggers a refetch, so rotated keys are picked up),
 * `exp`, `iss`, `aud`, and the presence of the Strata claims.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, JWT_STRATEGY) {
  constructor(config: ServiceConfig) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      secretOrKeyProvider: jwksKeyProvider(
        `${config.AUTH_INTERNAL_URL.replace(/\/$/, '')}/oidc/jwks`,
        config.JWKS_REFRESH_COOLDOWN_MS,
      ),
      issuer: config.AUTH_ISSUER,
      audience: config.API_AUDIENCE,
      algorithms: ['ES256', 'RS256', 'PS256'],
      ignoreExpiration: false,
      passReqToCallback: true,
    });
  }

  validate(req: { headers: Record<string, unknown> }, payload: Partial<AccessTokenClaims>): Principal {
    return principalFromClaims(payload, ExtractJwt.fromAuthHeaderAsBearerToken()(req) ?? '');
  }
}

type KeyCallback = (err: unknown, key?: string | Buffer) => void;

/**
 * Finds the verification key for a token's `kid` in the auth service's JWKS
 * (jose's remote key set: cached for 10 minutes, refetched on an unknown `kid`
 * at most every JWKS_REFRESH_COOLDOWN_MS, so a rotated key is picked up without a restart).
 */
export function jwksKeyProvider(
  jwksUri: string,
  cooldownMs = 30_000,
): (req: unknown, rawJwt: string, done: KeyCallback) => void {
  const keySet = createRemoteJWKSet(new URL(jwksUri), {
    cacheMaxAge: 10 * 60_000,
    cooldownDuration: cooldownMs,
    timeoutDuration: 5000,
  });
  // One public KeyObject per JWK: exporting and re-parsing the key on every
  // request cost more than verifying the signature.
  const keys = new WeakMap<object, KeyObject>();
  return (_req, rawJwt, done) => {
    (async () => {
      const header = decodeProtectedHeader(rawJwt);
      const key = await keySet(header, { payload: '', signature: '' });
      const known = keys.get(key);
      if (known) return known;
      const keyObject = createPublicKey(await exportSPKI(key));
      keys.set(key, keyObject);
      return keyObject;
    })().then(
      // jsonwebtoken (under passport-jwt) verifies with a KeyObject; passport-jwt's types only name PEM strings.
      (key) => done(null, key as unknown as Buffer),
      (err: unknown) => done(err),
    );
  };
}

export function principalFromClaims(payload: Partial<AccessTokenClaims>, token: string): Principal {
  if (typeof payload.sub !== 'string' || payload.sub === '') throw StrataException.unauthorized('Token has no subject');
  if (payload.isServiceAccount !== 'true' && payload.isServiceAccount !== 'false') {
    throw StrataException.unauthorized('Token has no isServiceAccount claim');
  }
  const isServiceAccount = payload.isServiceAccount === 'true';
  if (payload.workspace !== undefined && typeof payload.workspace !== 'string') {
    throw StrataException.unauthorized('Token workspace claim is malformed');
  }
  if (isServiceAccount && !payload.workspace) throw StrataException.unauthorized('Token has no workspace claim');
  const groups = Array.isArray(payload.groups) ? payload.groups.filter((g): g is string => typeof g === 'string') : [];
  return {
    type: isServiceAccount ? 'service_account' : 'user',
    id: payload.sub,
    workspace: payload.workspace || undefined,
    groups,
    scopes: typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [],
    credential: { kind: 'bearer', token },
    ...(typeof payload.exp === 'number' ? { expiresAt: payload.exp } : {}),
  };
}
