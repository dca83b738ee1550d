import type { SchemaDiscoveryConfig } from '@strata/contracts';
import { parseIsoDatetime } from '../../schema/datetime.js';
import { isPlainObject } from '../../schema/issues.js';
import { PROPERTY_NAME } from '../../schema/validate-properties.js';

/**
 * A property definition as a caller would send it. Discovery proposes these;
 * accepting one runs it through the same validator as any collection change.
 */
export interface ProposedProperty {
  name: string;
  type: 'string' | 'number' | 'boolean' | 'datetime' | 'array' | 'object';
  items?: { type: string };
  itemSchema?: ProposedProperty[];
  properties?: ProposedProperty[];
}

/** Strings in ISO 8601 form (a full date at least) become datetime. */
function looksLikeDatetime(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}/.test(value) && parseIsoDatetime(value) !== undefined;
}

/**
 * Proposes a property for one observed value, within the discovery limits:
 * objects are described down to `maxNestingDepth` levels and `maxKeysPerRecord`
 * keys (deeper ones are left open); strings are sampled up to
 * `maxStringLengthSampled` characters. Returns undefined for values that say
 * nothing (null) or cannot be a property (arrays of arrays, names that are not
 * property names). Pure.
 */
export function inferProperty(
  name: string,
  value: unknown,
  config: SchemaDiscoveryConfig,
  depth = 1,
): ProposedProperty | undefined {
  if (!PROPERTY_NAME.test(name) || name.length > 64 || value === null || value === undefined) return undefined;
  if (typeof value === 'boolean') return { name, type: 'boolean' };
  if (typeof value === 'number') return Number.isFinite(value) ? { name, type: 'number' } : undefined;
  if (typeof value === 'string') {
    return { name, type: looksLikeDatetime(value.slice(0, config.maxStringLengthSampled)) ? 'datetime' : 'string' };
  }
  if (Array.isArray(value)) return inferArray(name, value, config, depth);
  if (isPlainObject(value)) {
    return {
      name,
      type: 'object',
      properties: depth < config.maxNestingDepth ? inferObject(value, config, depth + 1) : [],
    };
  }
  return undefined;
}

/** Properties for the keys of an object, at most `maxKeysPerRecord` of them. */
export function inferObject(
  value: Record<string, unknown>,
  config: SchemaDiscoveryConfig,
  depth = 1,
): ProposedProperty[] {
  const out: ProposedProperty[] = [];
  for (const [key, v] of Object.entries(value).slice(0, config.maxKeysPerRecord)) {
    const property = inferProperty(key, v, config, depth);
    if (property) out.push(property);
  }
  return out;
}

function inferArray(
  name: string,
  value: unknown[],
  config: SchemaDiscoveryConfig,
  depth: number,
): ProposedProperty | undefined {
  const first = value.find((v) => v !== null && v !== undefined);
  if (first === undefined) return { name, type: 'array', items: { type: 'string' } };
  if (Array.isArray(first)) return undefined;
  if (isPlainObject(first)) {
    const merged = Object.assign({}, ...value.filter(isPlainObject)) as Record<string, unknown>;
    const itemSchema = depth < config.maxNestingDepth ? inferObject(merged, config, depth + 1) : [];
    return itemSchema.length ? { name, type: 'array', items: { type: 'object' }, itemSchema } : undefined;
  }
  const item = inferProperty('item', first, config, depth);
  if (!item || item.type === 'array' || item.type === 'object') return undefined;
  return { name, type: 'array', items: { type: item.type } };
}
