import { RE2JS, RE2JSException } from 're2js';

/**
 * `pattern` constraints run on RE2 (re2js): matching is linear in the input, so a
 * user's regular expression cannot stall the service (no catastrophic
 * backtracking). Syntax is RE2's: no backreferences or lookaround.
 */
const cache = new Map<string, RE2JS>();
const CACHE_LIMIT = 1000;

/** Compiles a pattern, or returns the reason it is not a valid regular expression. */
export function compilePattern(pattern: string): RE2JS | string {
  const cached = cache.get(pattern);
  if (cached) return cached;
  try {
    const compiled = RE2JS.compile(pattern);
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
    cache.set(pattern, compiled);
    return compiled;
  } catch (err) {
    if (err instanceof RE2JSException) return err.message;
    throw err;
  }
}

/** True when the pattern matches somewhere in `value` (JSON Schema semantics: not anchored). */
export function matchesPattern(pattern: string, value: string): boolean {
  const compiled = compilePattern(pattern);
  return typeof compiled !== 'string' && compiled.test(value);
}
