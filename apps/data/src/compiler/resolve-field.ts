import type { Collection, PropertyDefinition } from '@strata/contracts';
import { SYSTEM_COLUMNS, type FieldRef, type FieldType, type SystemColumn } from './query.types.js';

const SEGMENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_PATH = 10;

/** Looked up as a Map: a name such as `constructor` or `toString` is not a system column. */
const SYSTEM = new Map<string, FieldType>(Object.entries(SYSTEM_COLUMNS));

export interface ResolvedField {
  readonly ref: FieldRef;
  /** How the field compares; `text` in schemaless collections (everything compares as a string). */
  readonly type: FieldType | 'text';
}

export type Resolution = ResolvedField | { readonly problem: string };

/**
 * What the query does with the field. Secret fields (`isSecret`) are stored as
 * encrypted envelopes, so comparing, sorting, grouping, searching, joining or
 * aggregating on them would work on ciphertext: only `select` may name them
 * (the record presenter masks or opens the value for the caller).
 */
export type FieldUse = 'compare' | 'select';

/**
 * Resolves a field name of a query against its collection. System columns are
 * bare (`createdAt`); record fields are `data.<path>`. With `bareDataFields`
 * (the list filter), a bare name that is not a system column means a data
 * field. In strict and auto-evolving collections a data field must be a
 * defined property (nested properties through objects) and compares by its
 * type; in schemaless collections any path is allowed and compares as text.
 * Unless `use` is `select`, a path that is, lies inside, or holds a secret
 * property is refused, in every mode.
 *
 * Names are looked up as own entries only (a Map, `Array.find`), never with
 * `in` or an index into an object literal, so the names every JavaScript object
 * inherits (`constructor`, `toString`, `__proto__`, …) are ordinary names.
 */
export function resolveField(
  name: string,
  c: Pick<Collection, 'properties' | 'schemaDiscoveryMode'>,
  bareDataFields = false,
  use: FieldUse = 'compare',
): Resolution {
  const system = SYSTEM.get(name);
  if (system !== undefined) return { ref: { kind: 'system', column: name as SystemColumn }, type: system };
  let path: string[];
  if (name.startsWith('data.')) path = name.slice(5).split('.');
  else if (bareDataFields) path = name.split('.');
  else
    return {
      problem: `"${name}" is neither a system column (${[...SYSTEM.keys()].join(', ')}) nor a data.<field> path`,
    };
  if (path.length === 0 || path.some((s) => !SEGMENT.test(s)) || path.length > MAX_PATH) {
    return { problem: `"${name}" is not a valid field path` };
  }
  const ref: FieldRef = { kind: 'data', path };
  const found = propertiesAlong(c.properties, path);
  const whole = found.length === path.length ? found.at(-1) : undefined;
  // Secret itself, inside a secret (`data.ssn.x`), or holding one (an object with a secret inside).
  const secret = found.some(isSecretString) || (whole !== undefined && holdsSecret(whole));
  if (use === 'compare' && secret) {
    return {
      problem: `"${name}" is a secret field (isSecret): its stored value is encrypted, so a query can select it but not filter, sort, group, search, join or aggregate on it`,
    };
  }
  if (c.schemaDiscoveryMode === 'schemaless') return { ref, type: 'text' };
  if (!whole) return { problem: `"${name}" is not a property of this collection` };
  return { ref, type: whole.type };
}

/** The properties that a path walks through, as far as it names defined ones (through objects). */
function propertiesAlong(properties: readonly PropertyDefinition[], path: readonly string[]): PropertyDefinition[] {
  const out: PropertyDefinition[] = [];
  let level: readonly PropertyDefinition[] = properties;
  for (const segment of path) {
    const property = level.find((p) => p.name === segment);
    if (!property) break;
    out.push(property);
    if (property.type !== 'object') break;
    level = property.properties;
  }
  return out;
}

const isSecretString = (p: PropertyDefinition): boolean => p.type === 'string' && p.isSecret;

/** A secret string, or an object or array of objects with a secret somewhere inside. */
export function holdsSecret(property: PropertyDefinition): boolean {
  switch (property.type) {
    case 'string':
      return property.isSecret;
    case 'object':
      return property.properties.some(holdsSecret);
    case 'array':
      return (property.itemSchema ?? []).some(holdsSecret);
    case 'number':
    case 'boolean':
    case 'datetime':
    case 'reference':
      return false;
  }
}
