/**
 * class-transformer copies a DTO's free-form fields (a record's `data`, a
 * query's `where`: plain objects and arrays with no class of their own) key by
 * key, and skips every key that names a member the copy already inherits
 * (`toString`, `valueOf`, `constructor`, `hasOwnProperty`, …); Nest's pipe
 * also deletes `constructor` and `__proto__` keys. Those are ordinary field
 * names in a record, so the pipe puts back, after validation, each free-form
 * value as it arrived.
 */

/** A copy of parsed JSON with every own key (`__proto__` stays an own key). Depth is bounded at the edge. */
export function copyJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJson);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    Object.defineProperty(out, key, { value: copyJson(item), writable: true, enumerable: true, configurable: true });
  }
  return out;
}

/**
 * Walks a transformed DTO beside the copy of its body: nested DTOs are walked
 * in turn, and each free-form value (a plain object, or an array without DTOs
 * in it) is replaced by the copy's.
 */
export function restoreFreeForm(instance: unknown, original: unknown): void {
  if (!isObject(instance) || !isObject(original)) return;
  if (Array.isArray(instance)) {
    if (!Array.isArray(original)) return;
    instance.forEach((item, i) => restoreFreeForm(item, original[i]));
    return;
  }
  if (Array.isArray(original)) return;
  const target = instance as Record<string, unknown>;
  for (const [key, value] of Object.entries(target)) {
    if (!Object.hasOwn(original, key)) continue;
    const raw = (original as Record<string, unknown>)[key];
    if (isFreeForm(value)) target[key] = raw;
    else restoreFreeForm(value, raw);
  }
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function isDto(value: unknown): boolean {
  if (!isObject(value) || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto !== Object.prototype && proto !== null;
}

function isFreeForm(value: unknown): boolean {
  if (!isObject(value)) return false;
  return Array.isArray(value) ? !value.some((v) => isDto(v) || (Array.isArray(v) && v.some(isDto))) : !isDto(value);
}
