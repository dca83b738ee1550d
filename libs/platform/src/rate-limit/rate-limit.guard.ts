import { ExecutionContext, Injectable, Logger, type CanActivate } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { ErrorCode } from '@strata/contracts';
import { hashToken } from '@strata/crypto';
import { Clock } from '../clock/clock.js';
import { ServiceConfig } from '../config/service-config.js';
import { StrataException } from '../errors/strata.exception.js';
import { PRINCIPAL, type AuthenticatedRequest } from '../auth/access.decorators.js';
import { workspaceOf } from '../auth/access.guard.js';
import { RATE_LIMIT_CLASS, RATE_LIMIT_IN_HANDLER, type RateLimitBudget } from './rate-limit.decorator.js';
import { RateLimitStore } from './rate-limit.store.js';

/**
 * Per-workspace, per-class budgets (read 5000, write 1000, bulk 100, execute 500
 * a minute by default). Sets `x-ratelimit-limit` / `x-ratelimit-remaining` /
 * `x-ratelimit-reset` on every counted response and answers 429 with
 * `Retry-After` once the budget is spent. If the shared counter cannot be
 * reached the request is let through and a warning is logged: an outage of the
 * counter must not become an outage of the API.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly logger = new Logger('RateLimit');
  private readonly limits: Record<RateLimitBudget, number>;

  constructor(
    private readonly reflector: Reflector,
    private readonly store: RateLimitStore,
    private readonly config: ServiceConfig,
    private readonly clock: Clock,
  ) {
    this.limits = {
      read: config.RATE_LIMIT_READ_PER_MINUTE,
      write: config.RATE_LIMIT_WRITE_PER_MINUTE,
      bulk: config.RATE_LIMIT_BULK_PER_MINUTE,
      execute: config.RATE_LIMIT_EXECUTE_PER_MINUTE,
      lookups: config.RATE_LIMIT_LOOKUPS_PER_MINUTE,
    };
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const req = http.getRequest<AuthenticatedRequest>();
    const subject = rateLimitSubject(req);
    if (!subject) return true;
    if (
      this.reflector.getAllAndOverride<boolean | undefined>(RATE_LIMIT_IN_HANDLER, [
        context.getHandler(),
        context.getClass(),
      ])
    ) {
      return true;
    }
    const declared = this.reflector.getAllAndOverride<RateLimitBudget | undefined>(RATE_LIMIT_CLASS, [
      context.getHandler(),
      context.getClass(),
    ]);
    const cls: RateLimitBudget = declared ?? (req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'write');
    const limit = this.limits[cls];
    let count: number;
    let resetAt: number;
    try {
      ({ count, resetAt } = await this.store.hit(`${subject}.${cls}`, this.config.RATE_LIMIT_WINDOW_MS));
    } catch (err) {
      this.logger.warn({ msg: 'rate-limit counter unavailable; request allowed', err: String(err) });
      return true;
    }
    const res = http.getResponse<Response>();
    res.setHeader('x-ratelimit-limit', String(limit));
    res.setHeader('x-ratelimit-remaining', String(Math.max(0, limit - count)));
    res.setHeader('x-ratelimit-reset', String(Math.ceil(resetAt / 1000)));
    if (count > limit) {
      const retryAfter = Math.max(1, Math.ceil((resetAt - this.clock.now().getTime()) / 1000));
      throw new StrataException(
        ErrorCode.RATE_LIMITED,
        `Rate limit exceeded: ${limit} ${cls} operations per window`,
        undefined,
        {
          'Retry-After': String(retryAfter),
        },
      );
    }
    return true;
  }
}

/** Budgets belong to the URL's workspace; workspace-less routes count per principal. */
function rateLimitSubject(req: AuthenticatedRequest): string | undefined {
  const workspace = workspaceOf(req);
  if (workspace) return `ws.${workspace}`;
  const principal = req[PRINCIPAL];
  return principal ? `p.${hashToken(principal.id).slice(0, 32)}` : undefined;
}
