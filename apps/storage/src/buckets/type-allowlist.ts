/** A content type as the allowlist matches it: `type/subtype`, lowercase, no parameters. */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;
/** An allowlist entry: `*\/*`, `type/*` or an exact `type/subtype`. */
const PATTERN = /^(?:\*\/\*|[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/(?:\*|[a-z0-9][a-z0-9!#$&^_.+-]{0,126}))$/;

/** Every type: what a bucket allows unless told otherwise. */
export const ANY_TYPE = '*/*';

/** Why `pattern` is not an allowlist entry, or undefined. Pure. */
export function patternProblem(pattern: string): string | undefined {
  return PATTERN.test(pattern) ? undefined : "must be a content type ('image/png'), a family ('image/*') or '*/*'";
}

/** `type/subtype` without parameters, lowercase (`Image/PNG; x=1` → `image/png`); undefined when not a type. Pure. */
export function essenceOf(contentType: string): string | undefined {
  const essence = contentType.split(';')[0]!.trim().toLowerCase();
  return MEDIA_TYPE.test(essence) ? essence : undefined;
}

/** Whether `contentType` is allowed by any of `patterns` (`image/*` takes every `image/…`). Pure. */
export function typeAllowed(contentType: string, patterns: readonly string[]): boolean {
  const essence = essenceOf(contentType);
  if (!essence) return false;
  const family = essence.split('/')[0]!;
  return patterns.some((p) => p === ANY_TYPE || p === essence || p === `${family}/*`);
}
