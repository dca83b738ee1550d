import type { FieldError } from '@strata/contracts';

/** A JSON value, as a parsed request body holds it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Deeper JSON than this in a parameter is refused (it also stops a cyclic object from being walked forever). */
export const MAX_JSON_DEPTH = 32;

/**
 * The problems found so far, at most one per field: a field that is wrong in
 * two ways is reported once, with the first message.
 */
export class Issues {
  readonly list: FieldError[] = [];
  private readonly fields = new Set<string>();

  add(field: string, message: string): void {
    if (this.fields.has(field)) return;
    this.fields.add(field);
    this.list.push({ field, message });
  }

  get count(): number {
    return this.list.length;
  }
}

/** An object literal as JSON.parse makes it: not an array, not null, not a class instance. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * An own data property, or undefined: never the prototype's (`constructor`,
 * `__proto__`, `toString` read from a plain object are undefined unless the
 * body itself has them), never a getter's result.
 */
export function own(obj: Record<string, unknown>, key: string): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(obj, key);
  return descriptor !== undefined && 'value' in descriptor ? (descriptor.value as unknown) : undefined;
}

export function hasOwn(obj: Record<string, unknown>, key: string): boolean {
  return Object.hasOwn(obj, key);
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `parent.key` for identifier-like keys, `parent["odd key"]` otherwise. */
export function child(parent: string, key: string): string {
  return IDENTIFIER.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

/** Refuses, one entry each, the keys of `obj` that are not in `accepted`. */
export function refuseUnknownKeys(
  obj: Record<string, unknown>,
  accepted: readonly string[],
  path: string,
  issues: Issues,
  what: string,
): void {
  for (const key of Object.keys(obj)) {
    if (!accepted.includes(key)) {
      issues.add(child(path, key), `is not a field of ${what} (accepted: ${accepted.join(', ')})`);
    }
  }
}

/** The names of `list` joined for a message: `a, b or c`. */
export function oneOf(list: readonly string[]): string {
  return list.length <= 1 ? list.join('') : `${list.slice(0, -1).join(', ')} or ${list[list.length - 1]}`;
}

/**
 * A copy of `value` if it is JSON (null, boolean, finite number, string, array,
 * plain object, at most {@link MAX_JSON_DEPTH} deep); otherwise the offending
 * places are added to `issues` and undefined is returned. Copies are built with
 * Object.fromEntries, so a `__proto__` key stays an ordinary own property.
 */
export function copyJson(value: unknown, path: string, issues: Issues, depth = 0): JsonValue | undefined {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return value;
    issues.add(path, 'must be a finite number');
    return undefined;
  }
  if (depth >= MAX_JSON_DEPTH && typeof value === 'object') {
    issues.add(path, `nests deeper than ${MAX_JSON_DEPTH} levels`);
    return undefined;
  }
  if (Array.isArray(value)) {
    const before = issues.count;
    const out: JsonValue[] = [];
    for (let i = 0; i < value.length; i++) {
      const item = copyJson(
        Object.hasOwn(value, i) ? (value[i] as unknown) : undefined,
        `${path}[${i}]`,
        issues,
        depth + 1,
      );
      if (item !== undefined) out.push(item);
    }
    return issues.count === before ? out : undefined;
  }
  if (isPlainObject(value)) {
    const before = issues.count;
    const entries: [string, JsonValue][] = [];
    for (const key of Object.keys(value)) {
      const item = copyJson(own(value, key), child(path, key), issues, depth + 1);
      if (item !== undefined) entries.push([key, item]);
    }
    return issues.count === before ? Object.fromEntries<JsonValue>(entries) : undefined;
  }
  issues.add(path, 'is not a JSON value');
  return undefined;
}
