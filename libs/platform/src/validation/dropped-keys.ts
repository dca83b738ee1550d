import { plainToInstance } from 'class-transformer';
import type { FieldError } from '@strata/contracts';
import { copyJson } from './free-form.js';

/**
 * Keys Nest's pipe deletes from a body before class-validator sees it, so
 * that `forbidNonWhitelisted` never reports them: `{"name": "x",
 * "__proto__": 1}` would pass as `{"name": "x"}`. In a free-form value (a
 * record's `data`) they are ordinary keys, kept by `restoreFreeForm`; in an
 * object a DTO describes they are unknown fields like any other.
 */
const DROPPED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor']);

type Path = readonly (string | number)[];

/** Where the raw body has a key the pipe drops: the path of the object holding it, and the key. */
function droppedKeyPaths(value: unknown, at: Path = []): { holder: Path; key: string }[] {
  if (typeof value !== 'object' || value === null) return [];
  if (Array.isArray(value)) return value.flatMap((item, i) => droppedKeyPaths(item, [...at, i]));
  const found: { holder: Path; key: string }[] = [];
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if (DROPPED_KEYS.has(key)) found.push({ holder: at, key });
    else found.push(...droppedKeyPaths(item, [...at, key]));
  }
  return found;
}

function isDto(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto !== Object.prototype && proto !== null;
}

function fieldOf(holder: Path, key: string): string {
  return [...holder, key].reduce<string>(
    (path, part) => (typeof part === 'number' ? `${path}[${part}]` : path ? `${path}.${part}` : part),
    '',
  );
}

/**
 * The unknown-field errors for the dropped keys of `raw` (a body, before the
 * pipe) that sit in an object `metatype` describes, as class-validator words
 * its own (`property __proto__ should not exist`). Costs nothing for a body
 * without such keys; otherwise the body is transformed once more to tell
 * DTO objects from free-form ones.
 */
export function droppedKeyErrors(metatype: new () => object, raw: unknown): FieldError[] {
  const paths = droppedKeyPaths(raw);
  if (paths.length === 0) return [];
  const probe: unknown = plainToInstance(metatype, withoutDroppedKeys(raw), { enableImplicitConversion: false });
  return paths
    .filter(({ holder }) => isDto(holder.reduce<unknown>((node, part) => at(node, part), probe)))
    .map(({ holder, key }) => ({ field: fieldOf(holder, key), message: `property ${key} should not exist` }));
}

function at(node: unknown, part: string | number): unknown {
  if (typeof node !== 'object' || node === null || !Object.hasOwn(node, part)) return undefined;
  return (node as Record<string | number, unknown>)[part];
}

/** A copy without the dropped keys, as the pipe would see it (class-transformer skips them anyway). */
function withoutDroppedKeys(value: unknown): unknown {
  const copy = copyJson(value);
  const strip = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) return node.forEach(strip);
    for (const key of Object.keys(node)) {
      if (DROPPED_KEYS.has(key)) delete (node as Record<string, unknown>)[key];
      else strip((node as Record<string, unknown>)[key]);
    }
  };
  strip(copy);
  return copy;
}
