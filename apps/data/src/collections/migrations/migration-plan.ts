import type { ArrayItems, PropertyDefinition } from '@strata/contracts';
import { parseIsoDatetime } from '../../schema/datetime.js';
import { Issues, isPlainObject, own, show } from '../../schema/issues.js';
import { canonicalJson, checkValue } from '../../schema/value-check.js';

/** A top-level property whose stored values a collection change makes the records check (and convert). */
export interface MigratedField {
  readonly name: string;
  /** Whether the property did not exist before (a new required property, or one records hold values for). */
  readonly added: boolean;
}

/**
 * Fields of a property definition that say nothing about which stored values are valid:
 * a change of only these needs no migration. `isSecret` is handled by the change itself
 * (it seals or opens the values), and computed or auto-assigned fields are written by the
 * service, not converted.
 */
const PRESENTATION_KEYS = new Set([
  'id',
  'name',
  'description',
  'default',
  'renderAs',
  'indexed',
  'displayField',
  'onDelete',
  'immutable',
]);

function constraintsOf(p: PropertyDefinition): string {
  return canonicalJson(Object.fromEntries(Object.entries(p).filter(([k]) => !PRESENTATION_KEYS.has(k))));
}

const isSecret = (p: PropertyDefinition | undefined): boolean => p?.type === 'string' && p.isSecret === true;
const isServiceWritten = (p: PropertyDefinition): boolean =>
  ('expression' in p && p.expression !== undefined) || (p.type === 'number' && p.autoIncrement !== undefined);

/** Whether the only change is that the property stopped being required: no stored value can fail for that. */
function onlyNoLongerRequired(before: PropertyDefinition, after: PropertyDefinition): boolean {
  if (!before.required || after.required) return false;
  return constraintsOf({ ...before, required: false }) === constraintsOf({ ...after, required: false });
}

/** Whether a job checks a property's stored values at all (not secret, computed or auto-assigned). */
const isChecked = (p: PropertyDefinition, previous: PropertyDefinition | undefined): boolean =>
  !isSecret(p) && !isSecret(previous) && !isServiceWritten(p);

/**
 * The new properties that are not `required` (those are migrated anyway) and whose stored
 * values a job would check: records of an `auto-evolving` or `schemaless` collection (or of one
 * that was) may hold values under their names. The caller asks which ones records hold, and
 * passes them to {@link planMigration}. Pure.
 */
export function newOptionalProperties(
  before: readonly PropertyDefinition[],
  after: readonly PropertyDefinition[],
): string[] {
  const old = new Set(before.map((p) => p.name));
  return after.filter((p) => !old.has(p.name) && !p.required && isChecked(p, undefined)).map((p) => p.name);
}

/**
 * The top-level properties whose existing values a collection change must check: those whose
 * type or constraints changed (required, nullable, pattern, bounds, enum, isUnique, a
 * reference's target...), new required properties, and new properties named in `held` (those
 * some record holds a value for: the values are converted, checked and, for a unique one,
 * entered in the unique index like a changed property's). A property that only stops being
 * required needs nothing (the forced property removal relaxes properties so). Secret, computed and auto-assigned
 * properties are left out (sealed values cannot be read in bulk; the others are written by the
 * service). Pure.
 */
export function planMigration(
  before: readonly PropertyDefinition[],
  after: readonly PropertyDefinition[],
  held: ReadonlySet<string> = new Set(),
): MigratedField[] {
  const old = new Map(before.map((p) => [p.name, p]));
  const fields: MigratedField[] = [];
  for (const p of after) {
    const previous = old.get(p.name);
    if (!isChecked(p, previous)) continue;
    if (!previous) {
      if (p.required || held.has(p.name)) fields.push({ name: p.name, added: true });
      continue;
    }
    if (constraintsOf(previous) === constraintsOf(p) || onlyNoLongerRequired(previous, p)) continue;
    fields.push({ name: p.name, added: false });
  }
  return fields;
}

/** A value converted to a property's type, or why it cannot be. */
export type Conversion =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

const fail = (reason: string): Conversion => ({ ok: false, reason });
const ok = (value: unknown): Conversion => ({ ok: true, value });

/**
 * Converts a stored value to a type (docs/data.md, "Migrations", has the table). A value that
 * already has the type is returned as it is, so converting twice changes nothing: a batch that
 * runs again after a crash, or a record a client rewrote under the new definition, is left alone.
 * Pure.
 */
export function convertValue(rules: PropertyDefinition | ArrayItems, value: unknown): Conversion {
  if (value === null) return ok(null);
  switch (rules.type) {
    case 'string':
      if (typeof value === 'string') return ok(value);
      if (typeof value === 'number' || typeof value === 'boolean') return ok(String(value));
      return fail(`${kindOf(value)} cannot become a string`);
    case 'number': {
      if (typeof value === 'number') return ok(value);
      if (typeof value === 'string' && NUMBER.test(value.trim())) {
        const n = Number(value.trim());
        if (Number.isFinite(n)) return ok(n);
      }
      return fail(`${show(value)} is not a number`);
    }
    case 'boolean':
      if (typeof value === 'boolean') return ok(value);
      if (typeof value === 'string' && /^(true|false)$/i.test(value.trim()))
        return ok(value.trim().toLowerCase() === 'true');
      if (value === 1 || value === 0) return ok(value === 1);
      return fail(`${show(value)} is not a boolean (true/false, "true"/"false", 1/0)`);
    case 'datetime': {
      if (typeof value === 'string') {
        const ms = parseIsoDatetime(value.trim());
        return ms === undefined ? fail(`${show(value)} is not an ISO 8601 date-time`) : ok(new Date(ms).toISOString());
      }
      if (typeof value === 'number' && Number.isFinite(value)) {
        const date = new Date(value);
        if (!Number.isNaN(date.getTime())) return ok(date.toISOString());
      }
      return fail(`${show(value)} is not a date-time (ISO 8601 string or epoch milliseconds)`);
    }
    case 'array': {
      if (!Array.isArray(value)) return fail(`${kindOf(value)} cannot become an array`);
      if (rules.items.type === 'object') return ok(value);
      const items: unknown[] = [];
      for (const [i, item] of value.entries()) {
        const converted = convertValue(rules.items, item);
        if (!converted.ok) return fail(`item ${i}: ${converted.reason}`);
        items.push(converted.value);
      }
      return ok(items);
    }
    case 'object':
      return isPlainObject(value) ? ok(value) : fail(`${kindOf(value)} cannot become an object`);
    case 'reference': {
      if (rules.relationship === 'many-to-many') {
        const list = Array.isArray(value) ? value : [value];
        if (list.every((v) => typeof v === 'string' || typeof v === 'number')) return ok(list.map(String));
        return fail(`${show(value)} cannot become a list of references`);
      }
      if (typeof value === 'string' || typeof value === 'number') return ok(String(value));
      return fail(`${kindOf(value)} cannot become a reference`);
    }
  }
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (isPlainObject(value)) return 'an object';
  return show(value);
}

/** One field of a record that cannot meet its new definition. */
export interface FieldFailure {
  readonly field: string;
  readonly reason: string;
}

/** What a migration does to one record's data. */
export interface MigratedData {
  /** The data to store (only fields in the plan differ from the input). */
  readonly data: Record<string, unknown>;
  /** Each field the conversion changed, with its value before (`[]`: absent). */
  readonly before: Record<string, [] | [unknown]>;
  readonly failures: FieldFailure[];
}

/**
 * Converts the plan's fields of one record's data to `target` (the definition now in force),
 * and checks them against it. A field that cannot convert, or that fails a constraint, keeps
 * its value and is reported; a missing required field takes the property's default when it has
 * one. Uniqueness and reference targets are checked by the caller (they need the database).
 * Pure.
 */
export function migrateData(
  fields: readonly MigratedField[],
  target: readonly PropertyDefinition[],
  stored: Readonly<Record<string, unknown>>,
): MigratedData {
  const byName = new Map(target.map((p) => [p.name, p]));
  const data: Record<string, unknown> = { ...stored };
  const before: Record<string, [] | [unknown]> = {};
  const failures: FieldFailure[] = [];
  for (const { name } of fields) {
    const property = byName.get(name);
    // The field is not in this definition (a cancelled migration going back, say): left alone.
    if (!property) continue;
    const value = own(stored, name);
    if (value === undefined) {
      if (!property.required) continue;
      if (property.default !== undefined) {
        before[name] = [];
        data[name] = property.default;
      } else
        failures.push({ field: name, reason: 'is required and the record has no value (and the property no default)' });
      continue;
    }
    const converted = convertValue(property, value);
    if (!converted.ok) {
      failures.push({ field: name, reason: converted.reason });
      continue;
    }
    const issues = new Issues();
    checkValue(property, converted.value, name, issues);
    if (issues.count) {
      failures.push({ field: name, reason: issues.list.map((i) => i.message).join('; ') });
      continue;
    }
    if (canonicalJson(converted.value) !== canonicalJson(value)) {
      before[name] = [value];
      data[name] = converted.value;
    }
  }
  return { data, before, failures };
}

/**
 * Converts the plan's fields of a record's data for a write made while a migration runs: the
 * write then starts from values of the definition in force, whichever the migration has reached.
 * Values that cannot convert are left as they are (the write's validation names them). Pure.
 */
export function convertForWrite(
  fields: readonly MigratedField[],
  target: readonly PropertyDefinition[],
  stored: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const byName = new Map(target.map((p) => [p.name, p]));
  let data: Record<string, unknown> | undefined;
  for (const { name } of fields) {
    const property = byName.get(name);
    const value = own(stored, name);
    if (!property || value === undefined) continue;
    const converted = convertValue(property, value);
    if (converted.ok && canonicalJson(converted.value) !== canonicalJson(value)) {
      data ??= { ...stored };
      data[name] = converted.value;
    }
  }
  return data ?? { ...stored };
}

/**
 * For a cancel: the values the job replaced, put back where the record still holds what the
 * job wrote (a value a client wrote since is converted back like any other). Pure.
 */
export function putBack(
  fields: readonly MigratedField[],
  written: readonly PropertyDefinition[],
  stored: Readonly<Record<string, unknown>>,
  before: Readonly<Record<string, [] | [unknown]>> | undefined,
): Record<string, unknown> {
  const data: Record<string, unknown> = { ...stored };
  if (!before) return data;
  for (const { name } of fields) {
    const old = before[name];
    const property = written.find((p) => p.name === name);
    if (!old || !property) continue;
    let wrote: unknown = property.default;
    if (old.length === 1) {
      const converted = convertValue(property, old[0]);
      if (!converted.ok) continue;
      wrote = converted.value;
    }
    if (canonicalJson(own(stored, name)) !== canonicalJson(wrote)) continue;
    if (old.length === 0) delete data[name];
    else data[name] = old[0];
  }
  return data;
}

/** The definitions without their ids, at any depth (ids are generated for properties sent without one). */
export function withoutIds(properties: readonly PropertyDefinition[]): unknown {
  return JSON.parse(JSON.stringify(properties, (key, value: unknown) => (key === 'id' ? undefined : value)));
}
