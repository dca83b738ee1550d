import { SetMetadata } from '@nestjs/common';
import type { RateLimitClass } from '@strata/contracts';

export const RATE_LIMIT_CLASS = 'strata:rate-limit-class';

/** The rate-limit class of a route; by default GET/HEAD are `read` and the rest `write`. */
export const RateLimit = (cls: RateLimitClass): ClassDecorator & MethodDecorator => SetMetadata(RATE_LIMIT_CLASS, cls);
