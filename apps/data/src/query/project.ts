import type { RecordResponse } from '../records/record.types.js';

/**
 * Keeps the selected system columns and `data.` paths of a record (the id always stays).
 * Paths are read through own properties only and written as own properties, so a stored
 * field named `__proto__` or `constructor` (schemaless collections allow any name) is
 * copied as a field: it never reads an inherited member nor writes to a prototype.
 */
export function project(record: RecordResponse, fields: readonly string[]): Partial<RecordResponse> {
  const out: Record<string, unknown> = { id: record.id };
  const data: Record<string, unknown> = {};
  for (const name of fields) {
    if (name.startsWith('data.')) {
      const path = name.slice(5).split('.');
      let value: unknown = record.data;
      for (const segment of path) value = ownValue(value, segment);
      if (value !== undefined) setPath(data, path, value);
    } else {
      // A system column, resolved against the fixed list of them.
      out[name] = ownValue(record, name);
    }
  }
  if (fields.some((f) => f.startsWith('data.'))) out['data'] = data;
  return out;
}

function ownValue(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, key)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const segment of path.slice(0, -1)) {
    let next = ownValue(node, segment);
    if (typeof next !== 'object' || next === null) {
      next = {};
      define(node, segment, next);
    }
    node = next as Record<string, unknown>;
  }
  define(node, path.at(-1)!, value);
}

function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}
