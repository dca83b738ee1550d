import { at, show, type Issues } from './issues.js';

/**
 * Typed reads of one field of a raw JSON object, recording a problem at the
 * field's path when the value has the wrong type. Each returns undefined when
 * the field is absent or invalid.
 */
export class FieldReader {
  constructor(
    private readonly raw: Record<string, unknown>,
    private readonly path: string,
    private readonly issues: Issues,
  ) {}

  has(key: string): boolean {
    return this.own(key) !== undefined;
  }

  value(key: string): unknown {
    return this.own(key);
  }

  fieldPath(key: string): string {
    return at(this.path, key);
  }

  problem(key: string, message: string): void {
    this.issues.add(at(this.path, key), message);
  }

  string(key: string, options: { maxLength?: number; nonEmpty?: boolean } = {}): string | undefined {
    const v = this.own(key);
    if (v === undefined) return undefined;
    if (typeof v !== 'string') return this.fail(key, 'must be a string');
    if (options.nonEmpty && v.trim() === '') return this.fail(key, 'must not be empty');
    if (options.maxLength !== undefined && v.length > options.maxLength) {
      return this.fail(key, `must be at most ${options.maxLength} characters long`);
    }
    return v;
  }

  boolean(key: string): boolean | undefined {
    const v = this.own(key);
    if (v === undefined) return undefined;
    return typeof v === 'boolean' ? v : this.fail(key, 'must be a boolean');
  }

  number(key: string, options: { positive?: boolean } = {}): number | undefined {
    const v = this.own(key);
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v)) return this.fail(key, 'must be a number');
    if (options.positive && v <= 0) return this.fail(key, 'must be greater than 0');
    return v;
  }

  integer(key: string, options: { min?: number; max?: number } = {}): number | undefined {
    const v = this.own(key);
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v)) return this.fail(key, 'must be an integer');
    if (options.min !== undefined && v < options.min) return this.fail(key, `must be at least ${options.min}`);
    if (options.max !== undefined && v > options.max) return this.fail(key, `must be at most ${options.max}`);
    return v;
  }

  oneOf<T extends string>(key: string, allowed: readonly T[]): T | undefined {
    const v = this.own(key);
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
      return this.fail(key, `must be one of: ${allowed.join(', ')}`);
    }
    return v as T;
  }

  array(key: string, options: { maxItems?: number } = {}): unknown[] | undefined {
    const v = this.own(key);
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) return this.fail(key, 'must be an array');
    if (options.maxItems !== undefined && v.length > options.maxItems) {
      return this.fail(key, `must have at most ${options.maxItems} items`);
    }
    return v as unknown[];
  }

  /** A reader for a nested object field, or undefined (and a problem) when it is not an object. */
  object(key: string, expected: string): FieldReader | undefined {
    const v = this.own(key);
    if (v === undefined) return undefined;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return this.fail(key, `must be ${expected}`);
    return new FieldReader(v as Record<string, unknown>, at(this.path, key), this.issues);
  }

  /** Refuses every key not in `allowed`, naming why when the key belongs to another type. */
  onlyKeys(allowed: ReadonlySet<string>, describe: (key: string) => string): void {
    for (const key of Object.keys(this.raw)) {
      if (!allowed.has(key) && this.own(key) !== undefined) this.problem(key, describe(key));
    }
  }

  /** Own fields only: a definition never has a `toString` or `constructor` field by inheritance. */
  private own(key: string): unknown {
    return Object.hasOwn(this.raw, key) ? this.raw[key] : undefined;
  }

  private fail(key: string, message: string): undefined {
    this.issues.add(at(this.path, key), `${message} (got ${show(this.own(key))})`);
    return undefined;
  }
}
