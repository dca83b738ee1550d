import type { ArrayItems, PropertyDefinition } from '@strata/contracts';
import { parseIsoDatetime } from '../schema/datetime.js';
import { isPlainObject, own } from '../schema/issues.js';

/**
 * Stores datetimes in one form, UTC with milliseconds (`2026-01-01T08:00:00.000Z`),
 * at any depth, so that they compare and sort as instants in queries (and in
 * indexes) by plain string order. Values that are not valid datetimes are left
 * alone (validation reports them; schemaless data is not ours to change).
 */
export function normalizeDatetimes(properties: readonly PropertyDefinition[], data: Record<string, unknown>): void {
  for (const p of properties) {
    const value = own(data, p.name);
    if (value !== undefined && value !== null) data[p.name] = normalizeValue(p, value);
  }
}

function normalizeValue(rules: PropertyDefinition | ArrayItems, value: unknown): unknown {
  switch (rules.type) {
    case 'datetime':
      return asUtc(value);
    case 'object':
      if ('properties' in rules && isPlainObject(value)) normalizeDatetimes(rules.properties, value);
      return value;
    case 'array':
      if (!Array.isArray(value)) return value;
      if (rules.items.type === 'datetime') return value.map(asUtc);
      if (rules.items.type === 'object' && rules.itemSchema) {
        for (const item of value) if (isPlainObject(item)) normalizeDatetimes(rules.itemSchema, item);
      }
      return value;
    case 'string':
    case 'number':
    case 'boolean':
    case 'reference':
      return value;
  }
}

function asUtc(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const ms = parseIsoDatetime(value);
  return ms === undefined ? value : new Date(ms).toISOString();
}
