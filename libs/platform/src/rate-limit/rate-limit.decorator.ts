import { SetMetadata } from '@nestjs/common';
import type { RateLimitClass } from '@strata/contracts';

export const RATE_LIMIT_CLASS = 'strata:rate-limit-class';

/**
 * A budget the guard counts: the spec's classes, and `lookups`, the platform's
 * own for the permission lookups the services make on a caller's behalf (the
 * auth service's `permissions/me`): they must not spend the workspace's read
 * budget, or a workspace that spent it could not write either.
 */
export type RateLimitBudget = RateLimitClass | 'lookups';

/** The rate-limit class of a route; by default GET/HEAD are `read` and the rest `write`. */
export const RateLimit = (cls: RateLimitBudget): ClassDecorator & MethodDecorator => SetMetadata(RATE_LIMIT_CLASS, cls);

export const RATE_LIMIT_IN_HANDLER = 'strata:rate-limit-in-handler';

/**
 * The route counts its own budget in the handler (endpoint triggers: only a call
 * that reaches a run is counted, and a refused one is recorded on its run), so
 * the guard counts nothing for it.
 */
export const RateLimitedInHandler = (): ClassDecorator & MethodDecorator => SetMetadata(RATE_LIMIT_IN_HANDLER, true);
