import { ID_FORMATS, type ArrayItems, type PropertyDefinition } from '@strata/contracts';
import { parseIsoDatetime } from './datetime.js';
import { at, isPlainObject, show, type Issues } from './issues.js';
import { matchesPattern } from './pattern.js';

/** A property, or the item description of an array property. */
export type ValueRules = PropertyDefinition | ArrayItems;

const UUID = ID_FORMATS.uuid;

/**
 * `enumValue: true` checks one of the property's own enum values: every
 * constraint applies but the enum itself and `not` (an overlap with `not` is
 * reported once, on `not`).
 */
export interface CheckOptions {
  readonly enumValue?: boolean;
}

/**
 * Checks one value against a property's constraints and records every problem
 * found (not only the first). `null` is accepted only on nullable properties.
 * Pure: references are checked for shape here and for existence by the records service.
 */
export function checkValue(
  rules: ValueRules,
  value: unknown,
  path: string,
  issues: Issues,
  options: CheckOptions = {},
): void {
  if (value === null) {
    if (!('nullable' in rules && rules.nullable)) issues.add(path, 'must not be null');
    return;
  }
  switch (rules.type) {
    case 'string':
      return checkString(rules, value, path, issues, options);
    case 'number':
      return checkNumber(rules, value, path, issues, options);
    case 'boolean':
      if (typeof value !== 'boolean') return issues.add(path, 'must be a boolean');
      return checkEnum(rules, value, path, issues, options);
    case 'datetime':
      return checkDatetime(rules, value, path, issues, options);
    case 'array':
      return checkArray(rules, value, path, issues);
    case 'object':
      if ('properties' in rules) return checkObject(rules.properties, value, path, issues, rules);
      if (!isPlainObject(value)) issues.add(path, 'must be an object');
      return;
    case 'reference':
      return checkReference(rules, value, path, issues);
  }
}

/** Checks an object's keys against property definitions: required, unknown keys (when strict), each value. */
export function checkObject(
  properties: readonly PropertyDefinition[],
  value: unknown,
  path: string,
  issues: Issues,
  options: { strictProperties: boolean; requiredProperties?: readonly string[] },
): void {
  if (!isPlainObject(value)) return issues.add(path, 'must be an object');
  const required = new Set(options.requiredProperties ?? []);
  const known = new Set<string>();
  for (const property of properties) {
    known.add(property.name);
    const field = at(path, property.name);
    // Own fields only: a required property named toString is missing when the data lacks it.
    const given = Object.hasOwn(value, property.name) ? value[property.name] : undefined;
    if (given === undefined) {
      if (property.required || required.has(property.name)) issues.add(field, 'is required');
      continue;
    }
    checkValue(property, given, field, issues);
  }
  if (options.strictProperties) {
    for (const key of Object.keys(value)) {
      if (!known.has(key)) issues.add(at(path, key), 'is not a property of this object');
    }
  }
}

type Rules<T extends ValueRules['type']> = Extract<ValueRules, { type: T }>;

function checkString(
  rules: Rules<'string'>,
  value: unknown,
  path: string,
  issues: Issues,
  options: CheckOptions,
): void {
  if (typeof value !== 'string') return issues.add(path, 'must be a string');
  const length = [...value].length;
  if (rules.minLength !== undefined && length < rules.minLength) {
    issues.add(path, `must be at least ${rules.minLength} characters long`);
  }
  if (rules.maxLength !== undefined && length > rules.maxLength) {
    issues.add(path, `must be at most ${rules.maxLength} characters long`);
  }
  if (rules.pattern !== undefined && !matchesPattern(rules.pattern, value)) {
    issues.add(path, `must match the pattern ${rules.pattern}`);
  }
  if (!options.enumValue && rules.not?.includes(value)) issues.add(path, `must not be ${show(value)}`);
  checkEnum(rules, value, path, issues, options);
}

function checkNumber(
  rules: Rules<'number'>,
  value: unknown,
  path: string,
  issues: Issues,
  options: CheckOptions,
): void {
  if (typeof value !== 'number' || !Number.isFinite(value)) return issues.add(path, 'must be a number');
  if (rules.minimum !== undefined) {
    if (rules.exclusiveMinimum ? value <= rules.minimum : value < rules.minimum) {
      issues.add(path, `must be ${rules.exclusiveMinimum ? 'greater than' : 'at least'} ${rules.minimum}`);
    }
  }
  if (rules.maximum !== undefined) {
    if (rules.exclusiveMaximum ? value >= rules.maximum : value > rules.maximum) {
      issues.add(path, `must be ${rules.exclusiveMaximum ? 'less than' : 'at most'} ${rules.maximum}`);
    }
  }
  if (rules.multipleOf !== undefined && !isMultipleOf(value, rules.multipleOf)) {
    issues.add(path, `must be a multiple of ${rules.multipleOf}`);
  }
  checkEnum(rules, value, path, issues, options);
}

/** Tolerates binary floating point: 0.3 is a multiple of 0.1. */
export function isMultipleOf(value: number, step: number): boolean {
  const quotient = value / step;
  return Math.abs(quotient - Math.round(quotient)) <= 1e-9 * Math.max(1, Math.abs(quotient));
}

function checkDatetime(
  rules: Rules<'datetime'>,
  value: unknown,
  path: string,
  issues: Issues,
  options: CheckOptions,
): void {
  const instant = typeof value === 'string' ? parseIsoDatetime(value) : undefined;
  if (instant === undefined) return issues.add(path, 'must be an ISO 8601 date-time');
  const earliest = rules.earliestDate !== undefined ? parseIsoDatetime(rules.earliestDate) : undefined;
  const latest = rules.latestDate !== undefined ? parseIsoDatetime(rules.latestDate) : undefined;
  if (earliest !== undefined && (rules.exclusiveEarliest ? instant <= earliest : instant < earliest)) {
    issues.add(path, `must be ${rules.exclusiveEarliest ? 'after' : 'on or after'} ${rules.earliestDate}`);
  }
  if (latest !== undefined && (rules.exclusiveLatest ? instant >= latest : instant > latest)) {
    issues.add(path, `must be ${rules.exclusiveLatest ? 'before' : 'on or before'} ${rules.latestDate}`);
  }
  if (!options.enumValue && rules.enum !== undefined) {
    const allowed = rules.enum.map((e) => (typeof e === 'string' ? parseIsoDatetime(e) : undefined));
    if (!allowed.includes(instant)) issues.add(path, `must be one of ${show(rules.enum)}`);
  }
}

function checkArray(rules: Rules<'array'>, value: unknown, path: string, issues: Issues): void {
  if (!Array.isArray(value)) return issues.add(path, 'must be an array');
  if (rules.minItems !== undefined && value.length < rules.minItems) {
    issues.add(path, `must have at least ${rules.minItems} items`);
  }
  if (rules.maxItems !== undefined && value.length > rules.maxItems) {
    issues.add(path, `must have at most ${rules.maxItems} items`);
  }
  if (rules.uniqueItems) {
    const seen = new Map<string, number>();
    value.forEach((item, i) => {
      const key = canonicalJson(item);
      const first = seen.get(key);
      if (first !== undefined) issues.add(at(path, i), `duplicates item ${first}: items must be unique`);
      else seen.set(key, i);
    });
  }
  value.forEach((item, i) => {
    const itemPath = at(path, i);
    if (item === null) return issues.add(itemPath, 'must not be null');
    if (rules.items.type === 'object') {
      checkObject(rules.itemSchema ?? [], item, itemPath, issues, { strictProperties: rules.strictProperties });
    } else {
      checkValue(rules.items, item, itemPath, issues);
    }
  });
}

/** A reference holds the target's `targetField` value: a record id (UUID) by default. */
function checkReference(rules: Rules<'reference'>, value: unknown, path: string, issues: Issues): void {
  const byId = rules.targetField === 'id';
  const valid = (v: unknown) =>
    byId ? typeof v === 'string' && UUID.test(v) : typeof v === 'string' || typeof v === 'number';
  const expected = byId ? 'a record id (UUID)' : `a ${rules.target}.${rules.targetField} value (string or number)`;
  if (rules.relationship === 'many-to-many') {
    if (!Array.isArray(value)) return issues.add(path, `must be an array, each item ${expected}`);
    value.forEach((v, i) => {
      if (!valid(v)) issues.add(at(path, i), `must be ${expected}`);
    });
    if (new Set(value).size !== value.length) issues.add(path, 'must not list the same record twice');
    return;
  }
  if (!valid(value)) issues.add(path, `must be ${expected}`);
}

function checkEnum(
  rules: { enum?: unknown[] },
  value: unknown,
  path: string,
  issues: Issues,
  options: CheckOptions,
): void {
  if (options.enumValue || rules.enum === undefined) return;
  if (!rules.enum.some((allowed) => allowed === value)) issues.add(path, `must be one of ${show(rules.enum)}`);
}

/** JSON with sorted keys, so equal values compare equal whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isPlainObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
