import { ID_FORMATS } from '@strata/contracts';
import { parseIsoDatetime } from '../../schema/datetime.js';
import { isPlainObject, show } from '../../schema/issues.js';
import { OPERATORS as OPERATOR_NAMES } from '../../compiler/query.types.js';

export const VARIABLE_TYPES = ['uuid', 'string', 'number', 'boolean', 'datetime'] as const;
export type VariableType = (typeof VARIABLE_TYPES)[number];

export interface VariableDeclaration {
  readonly type: VariableType;
  /** Default true. An optional variable without a value drops the condition it is in. */
  readonly required?: boolean;
  readonly default?: unknown;
}

/** `${name}` (current) or `{{name}}` (deprecated), as a whole JSON string value. */
const PLACEHOLDER = /^(?:\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\})$/;
const ANY_PLACEHOLDER = /\$\{|\{\{/;

export interface PlaceholderScan {
  readonly names: Set<string>;
  /** True when the deprecated `{{var}}` form appears. */
  readonly legacy: boolean;
  readonly problems: { field: string; message: string }[];
}

/**
 * Finds the placeholders of a query definition. A placeholder must be a whole
 * value; identifier slots (object keys: field names, operators) accept literals
 * only, so a placeholder there is refused, as is one inside a longer string.
 */
export function scanPlaceholders(definition: unknown, path = 'query'): PlaceholderScan {
  const scan = { names: new Set<string>(), legacy: false, problems: [] as { field: string; message: string }[] };
  const walk = (node: unknown, at: string): void => {
    if (typeof node === 'string') {
      const m = PLACEHOLDER.exec(node);
      if (m) {
        scan.names.add((m[1] ?? m[2])!);
        if (m[2]) scan.legacy = true;
      } else if (ANY_PLACEHOLDER.test(node)) {
        scan.problems.push({ field: at, message: 'a placeholder must be the whole value (${name})' });
      }
    } else if (Array.isArray(node)) {
      node.forEach((item, i) => walk(item, `${at}[${i}]`));
    } else if (isPlainObject(node)) {
      for (const [key, value] of Object.entries(node)) {
        if (ANY_PLACEHOLDER.test(key))
          scan.problems.push({
            field: `${at}.${key}`,
            message: 'field names and operators are literals: placeholders are not allowed here',
          });
        walk(value, `${at}.${key}`);
      }
    }
  };
  walk(definition, path);
  return scan;
}

const UUID = ID_FORMATS.uuid;

/** Whether a value has the variable's type, by its JavaScript type: no coercion ("10" is not a number). */
export function fitsType(type: VariableType, value: unknown): boolean {
  switch (type) {
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    case 'uuid':
      return typeof value === 'string' && UUID.test(value);
    case 'datetime':
      return typeof value === 'string' && parseIsoDatetime(value) !== undefined;
  }
}

/** A value of each type, to check a saved definition against its collection before any execution. */
export const SAMPLE_VALUES: Record<VariableType, unknown> = {
  uuid: '00000000-0000-4000-8000-000000000000',
  string: 'sample',
  number: 0,
  boolean: true,
  datetime: '2000-01-01T00:00:00Z',
};

/** Marker for "no value": removed from its list, or drops the condition it is in. */
const ABSENT = Symbol('absent');

/**
 * Replaces placeholders with values. A placeholder with no value removes the
 * list item it is, or the whole `field: {op: …}` condition it is in.
 */
export function substitute(definition: unknown, values: ReadonlyMap<string, unknown>): unknown {
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') {
      const m = PLACEHOLDER.exec(node);
      if (!m) return node;
      const name = (m[1] ?? m[2])!;
      return values.has(name) ? values.get(name) : ABSENT;
    }
    if (Array.isArray(node)) return node.map(walk).filter((v) => v !== ABSENT);
    if (isPlainObject(node)) {
      const keys = Object.keys(node);
      const isOperator = keys.length === 1 && (OPERATOR_NAMES as readonly string[]).includes(keys[0]!);
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(node)) {
        const replaced = walk(value);
        if (replaced === ABSENT) {
          // {op: ${missing}}: the whole condition goes; elsewhere just this entry.
          if (isOperator) return ABSENT;
          continue;
        }
        // A list emptied by missing values (and: [...], in: [...]) goes too.
        if (Array.isArray(replaced) && replaced.length === 0 && Array.isArray(value) && value.length > 0) continue;
        // Defined, not assigned: a key named __proto__ stays a key.
        Object.defineProperty(out, key, { value: replaced, writable: true, enumerable: true, configurable: true });
      }
      // A map whose every entry went is itself gone.
      return keys.length > 0 && Object.keys(out).length === 0 ? ABSENT : out;
    }
    return node;
  };
  const result = walk(definition);
  return result === ABSENT ? {} : result;
}

export function describeValue(value: unknown): string {
  return show(value);
}
