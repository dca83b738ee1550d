import type { Collection, PropertyDefinition } from '@strata/contracts';
import { SYSTEM_COLUMNS, type FieldRef, type FieldType, type SystemColumn } from './query.types.js';

const SEGMENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface ResolvedField {
  readonly ref: FieldRef;
  /** How the field compares; `text` in schemaless collections (everything compares as a string). */
  readonly type: FieldType | 'text';
}

export type Resolution = ResolvedField | { readonly problem: string };

/**
 * Resolves a field name of a query against its collection. System columns are
 * bare (`createdAt`); record fields are `data.<path>`. With `bareDataFields`
 * (the list filter), a bare name that is not a system column means a data
 * field. In strict and auto-evolving collections a data field must be a
 * defined property (nested properties through objects) and compares by its
 * type; in schemaless collections any path is allowed and compares as text.
 */
export function resolveField(
  name: string,
  c: Pick<Collection, 'properties' | 'schemaDiscoveryMode'>,
  bareDataFields = false,
): Resolution {
  if (name in SYSTEM_COLUMNS) {
    const column = name as SystemColumn;
    return { ref: { kind: 'system', column }, type: SYSTEM_COLUMNS[column] };
  }
  let path: string[];
  if (name.startsWith('data.')) path = name.slice(5).split('.');
  else if (bareDataFields) path = name.split('.');
  else
    return {
      problem: `"${name}" is neither a system column (${Object.keys(SYSTEM_COLUMNS).join(', ')}) nor a data.<field> path`,
    };
  if (path.length === 0 || path.some((s) => !SEGMENT.test(s)) || path.length > 10) {
    return { problem: `"${name}" is not a valid field path` };
  }
  const ref: FieldRef = { kind: 'data', path };
  if (c.schemaDiscoveryMode === 'schemaless') return { ref, type: 'text' };
  const property = propertyAt(c.properties, path);
  if (!property) return { problem: `"${name}" is not a property of this collection` };
  return { ref, type: property.type };
}

function propertyAt(
  properties: readonly PropertyDefinition[],
  path: readonly string[],
): PropertyDefinition | undefined {
  const [head, ...rest] = path;
  const property = properties.find((p) => p.name === head);
  if (!property || rest.length === 0) return property;
  return property.type === 'object' ? propertyAt(property.properties, rest) : undefined;
}
