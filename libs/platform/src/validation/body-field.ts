/**
 * A top-level field of a request body checked by its service (`checkBody`),
 * which may not be an object at all: undefined then, and for a key the body
 * does not have of its own.
 */
export function bodyField(raw: unknown, key: string): unknown {
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw) && Object.hasOwn(raw, key)
    ? (raw as Record<string, unknown>)[key]
    : undefined;
}
