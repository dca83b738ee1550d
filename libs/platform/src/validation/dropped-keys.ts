import { plainToInstance } from 'class-transformer';
import type { FieldError } from '@strata/contracts';
import { copyJson } from './free-form.js';

/**
 * Keys that never reach the unknown-field check: Nest's pipe deletes
 * `__proto__`, `constructor` and `prototype` from a body before class-validator
 * sees it, and class-transformer leaves out every key that names a member of
 * `Object.prototype` (`toString`, `valueOf`, `hasOwnProperty`, …). So
 * `{"name": "x", "toString": 1}` would pass as `{"name": "x"}`. In a free-form
 * value (a record's `data`) they are ordinary keys, kept by `restoreFreeForm`;
 * in an object a DTO describes they are unknown fields like any other.
 */
const DROPPED_KEYS: ReadonlySet<string> = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

/** Keys never handed to class-transformer, not even for the probe below. */
const UNSAFE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

type Path = readonly (string | number)[];

function hasDroppedKey(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(hasDroppedKey);
  return Object.entries(value as Record<string, unknown>).some(
    ([key, item]) => DROPPED_KEYS.has(key) || hasDroppedKey(item),
  );
}

function isDto(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto !== Object.prototype && proto !== null;
}

function fieldOf(at: Path, key: string): string {
  return [...at, key].reduce<string>(
    (path, part) => (typeof part === 'number' ? `${path}[${part}]` : path ? `${path}.${part}` : part),
    '',
  );
}

/** Walks the raw body beside its DTO instance; reports the dropped keys of each object a DTO describes. */
function walk(raw: unknown, instance: unknown, at: Path, errors: FieldError[]): void {
  if (Array.isArray(raw)) {
    if (Array.isArray(instance)) raw.forEach((item, i) => walk(item, instance[i], [...at, i], errors));
    return;
  }
  if (typeof raw !== 'object' || raw === null || !isDto(instance)) return;
  const target = instance as Record<string, unknown>;
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (DROPPED_KEYS.has(key)) errors.push({ field: fieldOf(at, key), message: `property ${key} should not exist` });
    else if (Object.hasOwn(target, key)) walk(value, target[key], [...at, key], errors);
  }
}

/**
 * The unknown-field errors for the dropped keys of `raw` (a body, before the
 * pipe) that sit in an object `metatype` describes, worded as class-validator
 * words its own (`property toString should not exist`). Costs nothing for a
 * body without such keys; otherwise the body is transformed once more to tell
 * DTO objects from free-form ones.
 */
export function droppedKeyErrors(metatype: new () => object, raw: unknown): FieldError[] {
  if (!hasDroppedKey(raw)) return [];
  const probe: unknown = plainToInstance(metatype, withoutUnsafeKeys(raw), { enableImplicitConversion: false });
  const errors: FieldError[] = [];
  walk(raw, probe, [], errors);
  return errors;
}

/** A copy without the keys that could reach a prototype, as the pipe would see it. */
function withoutUnsafeKeys(value: unknown): unknown {
  const copy = copyJson(value);
  const strip = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) return node.forEach(strip);
    for (const key of Object.keys(node)) {
      if (UNSAFE_KEYS.has(key)) delete (node as Record<string, unknown>)[key];
      else strip((node as Record<string, unknown>)[key]);
    }
  };
  strip(copy);
  return copy;
}
