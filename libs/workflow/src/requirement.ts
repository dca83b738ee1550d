/**
 * The message of a field that is missing or not what it must be: `is required:
 * <what>` when it was left out, `must be <what>` when it was given wrong (a
 * caller who sent `"functionId": "abc"` did not forget it).
 */
export function requirement(value: unknown, what: string, requiredWhen = ''): string {
  return value === undefined ? `is required${requiredWhen}: ${what}` : `must be ${what}`;
}
