import type { FieldError } from '@strata/contracts';

/** Collects one entry per offending field, each with a path that points at it. */
export class Issues {
  private readonly entries: FieldError[] = [];

  add(field: string, message: string): void {
    this.entries.push({ field, message });
  }

  get list(): readonly FieldError[] {
    return this.entries;
  }

  get count(): number {
    return this.entries.length;
  }
}

/** `properties[2]` + `maxLength` → `properties[2].maxLength`; indexes become `[i]`. */
export function at(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent ? `${parent}.${key}` : key;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A field of a record's data, or undefined when the object has no such field of
 * its own: a property may be named like a member every object inherits
 * (`toString`, `constructor`), and `data.toString` would otherwise be a function.
 */
export function own(value: Readonly<Record<string, unknown>> | undefined, key: string): unknown {
  return value !== undefined && Object.hasOwn(value, key) ? value[key] : undefined;
}

/** A JSON value as a short, readable string for messages. */
export function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
