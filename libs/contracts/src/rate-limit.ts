/** Rate-limit classes of the specification, each a budget per workspace per minute. */
export const RATE_LIMIT_CLASSES = ['read', 'write', 'bulk', 'execute'] as const;
export type RateLimitClass = (typeof RATE_LIMIT_CLASSES)[number];

export const RATE_LIMITS_PER_MINUTE: Readonly<Record<RateLimitClass, number>> = {
  read: 5000,
  write: 1000,
  bulk: 100,
  execute: 500,
};
