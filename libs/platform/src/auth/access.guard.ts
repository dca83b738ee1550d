import { ExecutionContext, Injectable, type CanActivate } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { AuthGuard } from '@nestjs/passport';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode, isWorkspaceSlug, permits, permitsAnywhere, type Action, type Resource } from '@strata/contracts';
import { issueWorkspaceScope } from '@strata/db';
import { rememberErrorShape } from '../errors/error-shape.decorator.js';
import { StrataException } from '../errors/strata.exception.js';
import {
  ACCESS,
  GRANTED,
  GRANTED_COLLECTIONS,
  PRINCIPAL,
  REQUIRED_SCOPE,
  SCOPE,
  USER_ONLY,
  type AccessRule,
  type AuthenticatedRequest,
} from './access.decorators.js';
import { JWT_STRATEGY } from './jwt.strategy.js';
import { ServiceConfig } from '../config/service-config.js';
import { PermissionResolver } from './permission-resolver.js';
import { PrincipalNames } from './principal-names.js';
import { VerifiedTokens } from './verified-tokens.js';
import type { Principal } from './principal.js';

export const PUBLISHABLE_KEY_HEADER = 'x-publishable-key';

/** passport-jwt behind Nest's guard, with its failures turned into our 401s. */
@Injectable()
class JwtGuard extends AuthGuard(JWT_STRATEGY) {
  override handleRequest<T>(err: unknown, user: T | false, info: unknown): T {
    if (err instanceof StrataException) throw err;
    if (err || !user) {
      const reason = info instanceof Error ? info.message : undefined;
      throw StrataException.unauthorized(describeJwtFailure(reason));
    }
    return user;
  }
}

function describeJwtFailure(reason: string | undefined): string {
  if (!reason || reason === 'No auth token') return 'Missing bearer token';
  if (reason === 'jwt expired') return 'Token has expired';
  if (reason.startsWith('jwt issuer invalid')) return 'Token issuer is not accepted';
  if (reason.startsWith('jwt audience invalid')) return 'Token audience is not accepted';
  return 'Invalid token';
}

/** The route's workspace parameter, under the names the specification uses. */
export function workspaceOf(req: AuthenticatedRequest): string | undefined {
  const params = req.params as Record<string, string | undefined>;
  return params['workspace'] ?? params['workspaceSlug'];
}

/**
 * One guard for every route: public, or a verified credential for the URL's
 * workspace whose groups grant the declared permission. A route that declares
 * nothing is refused (and the app refuses to boot with one: see RouteAccessCheck).
 */
@Injectable()
export class AccessGuard implements CanActivate {
  private readonly jwt = new JwtGuard();
  private readonly verified: VerifiedTokens;

  constructor(
    private readonly reflector: Reflector,
    private readonly resolver: PermissionResolver,
    config: ServiceConfig,
    private readonly names: PrincipalNames,
  ) {
    this.verified = new VerifiedTokens(config.TOKEN_CACHE_TTL_MS);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    const req = context.switchToHttp().getRequest<AuthenticatedRequest>();
    rememberErrorShape(this.reflector, context);

    const rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS, targets);
    if (!rule) throw new StrataException(ErrorCode.INTERNAL, 'Route declares no access rule');
    if (rule.kind === 'public') return true;

    const principal = await this.authenticate(context, req);
    req[PRINCIPAL] = principal;
    const workspace = workspaceOf(req);
    if (workspace !== undefined && !isWorkspaceSlug(workspace)) {
      throw StrataException.notFound(`Workspace '${workspace}' not found`);
    }

    if (principal.type === 'publishable_key' && !workspace) {
      throw StrataException.forbidden('A publishable key cannot call this endpoint');
    }
    if (workspace && principal.type !== 'publishable_key' && principal.workspace !== workspace) {
      throw StrataException.forbidden(
        `The token is not valid for workspace '${workspace}'`,
        ErrorCode.WORKSPACE_MISMATCH,
      );
    }
    if (this.reflector.getAllAndOverride<boolean | undefined>(USER_ONLY, targets) && principal.type !== 'user') {
      throw StrataException.forbidden('This endpoint needs a user token from an interactive login');
    }
    // The credential holds this workspace (the token's claim; a key's own workspace is what the
    // resolver confirms): once resolved, the request acts within it and nothing wider.
    const scope = workspace === undefined ? undefined : issueWorkspaceScope(workspace);
    const { permissions, collections, displayName } = await this.resolver.resolve(principal, scope);
    req[GRANTED] = permissions;
    req[GRANTED_COLLECTIONS] = collections;
    if (scope && displayName !== undefined) this.names.remember(scope, principal.id, displayName);
    if (scope) req[SCOPE] = scope;
    // The permission first, then the OAuth scope (docs/identity.md): a caller lacking both is told of
    // the permission, which its administrator grants, before the scope its token requests.
    // A permission held on some collections only passes here: the handler decides per collection.
    if (rule.kind === 'permission') {
      const missing = rule.permissions.filter((p) => {
        const [resource, action] = splitPermission(p);
        return !permitsAnywhere(permissions, collections, resource, action);
      });
      if (missing.length > 0) {
        throw StrataException.forbidden(`Missing permission: ${missing.join(', ')}`);
      }
    }
    const oauthScope = this.reflector.getAllAndOverride<string | undefined>(REQUIRED_SCOPE, targets);
    if (oauthScope && !holdsScope(principal, oauthScope, permissions)) {
      throw StrataException.forbidden(`The token lacks the scope '${oauthScope}'`);
    }
    return true;
  }

  private async authenticate(context: ExecutionContext, req: AuthenticatedRequest): Promise<Principal> {
    const key = req.headers[PUBLISHABLE_KEY_HEADER];
    if (typeof key === 'string' && !req.headers.authorization) {
      return {
        type: 'publishable_key',
        id: key.slice(0, 16),
        workspace: undefined,
        groups: [],
        scopes: [],
        credential: { kind: 'publishable_key', key },
      };
    }
    const token = bearerToken(req);
    const known = token === undefined ? undefined : this.verified.get(token);
    if (known) return known;
    await this.jwt.canActivate(context);
    const { user } = req as unknown as { user: Principal };
    if (token !== undefined && user.expiresAt !== undefined) this.verified.set(token, user, user.expiresAt);
    return user;
  }
}

/**
 * The access guard's bearer check for a handler that authenticates by itself
 * (endpoint triggers, whose auth mode is the trigger's): a verified bearer
 * token for `workspace` whose groups grant `resource:action`. Throws the
 * guard's 401 and 403 errors; answers the principal.
 */
@Injectable()
export class BearerAuthorizer {
  private readonly jwt = new JwtGuard();
  private readonly verified: VerifiedTokens;

  constructor(
    private readonly resolver: PermissionResolver,
    config: ServiceConfig,
  ) {
    this.verified = new VerifiedTokens(config.TOKEN_CACHE_TTL_MS);
  }

  /** Whether the request carries a bearer token at all (to tell "no credential" from "a wrong one"). */
  static presented(req: IncomingMessage): boolean {
    return bearerToken(req) !== undefined;
  }

  async authorize(req: IncomingMessage, res: ServerResponse, workspace: string, resource: Resource, action: Action) {
    const token = bearerToken(req);
    if (token === undefined) throw StrataException.unauthorized('Missing bearer token');
    let principal = this.verified.get(token);
    if (!principal) {
      await this.jwt.canActivate(new ExecutionContextHost([req, res]));
      principal = (req as unknown as { user: Principal }).user;
      if (principal.expiresAt !== undefined) this.verified.set(token, principal, principal.expiresAt);
    }
    if (principal.workspace !== workspace) {
      throw StrataException.forbidden(
        `The token is not valid for workspace '${workspace}'`,
        ErrorCode.WORKSPACE_MISMATCH,
      );
    }
    const { permissions } = await this.resolver.resolve(principal, issueWorkspaceScope(workspace));
    if (!permits(permissions, resource, action)) {
      throw StrataException.forbidden(`Missing permission: ${resource}:${action}`);
    }
    return principal;
  }
}

/**
 * A service account holds an OAuth scope when its token carries it (requested at
 * the token endpoint, within the account's `scope`). A user's interactive token
 * carries `openid` only, so a user holds a scope through policy: the same-named
 * permission (`webhooks:replay`) or `*` (workspace administrators).
 */
function holdsScope(principal: Principal, scope: string, permissions: ReadonlySet<string>): boolean {
  if (principal.scopes.includes(scope)) return true;
  return principal.type === 'user' && (permissions.has('*') || permissions.has(scope));
}

function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  return header?.startsWith('Bearer ') ? header.slice(7) : undefined;
}

function splitPermission(permission: string): [string, string] {
  const i = permission.lastIndexOf(':');
  return i < 0 ? [permission, ''] : [permission.slice(0, i), permission.slice(i + 1)];
}
