import type { Collection, PropertyDefinition } from '@strata/contracts';
import { parseIsoDatetime } from '../schema/datetime.js';
import { evaluateExpression } from '../schema/expressions.js';
import { at, isPlainObject, Issues, own, show } from '../schema/issues.js';
import { canonicalJson, checkObject } from '../schema/value-check.js';
import { keepMaskedSecrets, secretFields, withoutSecrets } from '../secrets/secret-paths.js';

export type WriteMode = 'create' | 'replace' | 'patch';

export interface PreparedData {
  /** The data to store (computed and auto-assigned fields not yet filled in). */
  readonly data: Record<string, unknown>;
  readonly issues: Issues;
  /** Top-level fields the schema does not define (auto-evolving collections accept them). */
  readonly unknownFields: string[];
}

type Schema = Pick<Collection, 'properties' | 'schemaDiscoveryMode'>;

const isComputed = (p: PropertyDefinition): boolean => 'expression' in p && p.expression !== undefined;
const isAutoIncrement = (p: PropertyDefinition): boolean => p.type === 'number' && p.autoIncrement !== undefined;

/**
 * Builds the data a write will store and checks it against the collection, listing
 * every problem at once:
 * - create and replace (PUT) start from the request; patch merges it into the
 *   stored data, a `null` removing the field;
 * - defaults fill absent fields on create and replace;
 * - computed and auto-assigned fields cannot be set (sending the stored value back is fine);
 * - immutable fields cannot change once stored;
 * - strict collections refuse unknown fields, auto-evolving ones accept and report
 *   them, schemaless ones accept anything.
 * Pure.
 */
export function prepareRecordData(
  schema: Schema,
  mode: WriteMode,
  input: unknown,
  previous?: Readonly<Record<string, unknown>>,
): PreparedData {
  const issues = new Issues();
  if (!isPlainObject(input)) {
    issues.add('data', 'must be an object');
    return { data: {}, issues, unknownFields: [] };
  }
  const byName = new Map(schema.properties.map((p) => [p.name, p]));
  // Spread and setField define own properties: a field named __proto__ stays an ordinary
  // (unknown) key and never becomes the object's prototype. (A null-prototype object
  // would do the same, but V8 keeps those in slow dictionary mode, and this object is
  // checked, diffed and serialized several times per write.)
  const data: Record<string, unknown> = mode === 'patch' ? { ...previous } : {};
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    const property = byName.get(key);
    if (property && (isComputed(property) || isAutoIncrement(property))) {
      if (mode === 'create' || canonicalJson(value) !== canonicalJson(own(previous, key))) {
        issues.add(
          at('data', key),
          isComputed(property) ? 'is computed and cannot be set' : 'is assigned automatically and cannot be set',
        );
      }
      continue;
    }
    if (mode === 'patch' && value === null) delete data[key];
    else setField(data, key, value);
  }
  if (previous) {
    // A caller without secrets:reveal writes back the mask it read: the stored secret stays.
    const secrets = secretFields(schema.properties);
    const kept = keepMaskedSecrets(secrets, data, previous);
    for (const key of secrets.keys()) if (kept !== data && Object.hasOwn(kept, key)) data[key] = kept[key];
  }
  if (mode !== 'patch' && previous) {
    // PUT keeps what the caller cannot send: auto-assigned and persisted computed values.
    for (const p of schema.properties)
      if (isAutoIncrement(p) && own(previous, p.name) !== undefined) data[p.name] = own(previous, p.name);
  }
  if (mode !== 'patch') applyDefaults(schema.properties, data);
  if (previous) {
    for (const p of schema.properties) {
      if (
        p.immutable &&
        own(previous, p.name) !== undefined &&
        canonicalJson(own(previous, p.name)) !== canonicalJson(own(data, p.name))
      ) {
        issues.add(at('data', p.name), 'is immutable and cannot change');
      }
    }
  }
  const unknownFields = Object.keys(data).filter((k) => !byName.has(k));
  if (schema.schemaDiscoveryMode !== 'schemaless') {
    // Computed and auto-assigned fields are the service's to fill: check everything else.
    const assigned = new Set(schema.properties.filter((p) => isComputed(p) || isAutoIncrement(p)).map((p) => p.name));
    const checked = schema.properties.filter((p) => !assigned.has(p.name));
    const view = Object.fromEntries(Object.entries(data).filter(([k]) => !assigned.has(k)));
    checkObject(checked, view, 'data', issues, { strictProperties: schema.schemaDiscoveryMode === 'strict' });
  }
  return { data, issues, unknownFields: schema.schemaDiscoveryMode === 'auto-evolving' ? unknownFields : [] };
}

/** `data[key] = value`, except that `__proto__` becomes an own property instead of the prototype. */
function setField(data: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(data, key, { value, writable: true, enumerable: true, configurable: true });
  else data[key] = value;
}

function applyDefaults(properties: readonly PropertyDefinition[], data: Record<string, unknown>): void {
  for (const p of properties) {
    if (own(data, p.name) === undefined && p.default !== undefined) data[p.name] = structuredClone(p.default);
    const value = own(data, p.name);
    if (p.type === 'object' && isPlainObject(value)) applyDefaults(p.properties, value);
  }
}

/**
 * Evaluates computed fields of the given mode into `data` (persisted ones before
 * storing, virtual ones when reading). A result of the wrong type is a problem
 * of the write; an expression over absent fields leaves the field absent.
 * Expressions never see secret fields: to them a secret is absent, so neither a
 * computed value nor an error message can carry one to a caller without
 * `secrets:reveal`.
 */
export async function computeFields(
  properties: readonly PropertyDefinition[],
  data: Record<string, unknown>,
  mode: 'persisted' | 'virtual',
  issues: Issues,
): Promise<void> {
  let view: Record<string, unknown> | undefined;
  for (const p of properties) {
    if ((p.type !== 'number' && p.type !== 'datetime') || p.expression === undefined || p.computedMode !== mode)
      continue;
    // A copy: results go into both, and later expressions may read earlier results.
    view ??= { ...withoutSecrets(secretFields(properties), data) };
    let result: unknown;
    try {
      result = await evaluateExpression(p.expression, view);
    } catch (err) {
      issues.add(at('data', p.name), `expression failed: ${(err as Error).message}`);
      continue;
    }
    let value: unknown;
    if (result === undefined || result === null) {
      value = undefined;
    } else if (p.type === 'number') {
      if (typeof result === 'number' && Number.isFinite(result)) value = result;
      else {
        issues.add(at('data', p.name), `expression produced ${show(result)}, not a number`);
        continue;
      }
    } else if (typeof result === 'number' && Number.isFinite(result)) {
      value = new Date(result).toISOString();
    } else if (typeof result === 'string' && parseIsoDatetime(result) !== undefined) {
      value = result;
    } else {
      issues.add(at('data', p.name), `expression produced ${show(result)}, not a date-time`);
      continue;
    }
    if (value === undefined) {
      delete data[p.name];
      delete view[p.name];
    } else {
      data[p.name] = value;
      view[p.name] = value;
    }
  }
}
