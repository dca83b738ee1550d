import type { RecordResponse } from '../records/record.types.js';

/** Keeps the selected system columns and `data.` paths of a record (the id always stays). */
export function project(record: RecordResponse, fields: readonly string[]): Partial<RecordResponse> {
  const out: Record<string, unknown> = { id: record.id };
  const data: Record<string, unknown> = {};
  for (const name of fields) {
    if (name.startsWith('data.')) {
      const path = name.slice(5).split('.');
      let value: unknown = record.data;
      for (const segment of path) value = (value as Record<string, unknown> | undefined)?.[segment];
      if (value !== undefined) setPath(data, path, value);
    } else {
      out[name] = (record as unknown as Record<string, unknown>)[name];
    }
  }
  if (fields.some((f) => f.startsWith('data.'))) out['data'] = data;
  return out;
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const segment of path.slice(0, -1)) {
    node[segment] = node[segment] ?? {};
    node = node[segment] as Record<string, unknown>;
  }
  node[path.at(-1)!] = value;
}
