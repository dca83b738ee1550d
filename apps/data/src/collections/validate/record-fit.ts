import type { Collection, FieldError, PropertyDefinition, ReferenceProperty } from '@strata/contracts';
import { prepareRecordData } from '../../records/record-data.js';
import { own } from '../../schema/issues.js';
import { secretPaths } from '../../secrets/secret-paths.js';

/** A definition stored records are checked against. */
export type ProposedSchema = Pick<Collection, 'properties' | 'schemaDiscoveryMode'>;

/**
 * How a stored record's data (secrets opened) fails a proposed definition: each field as the
 * next write of the record would find it (types, constraints, required fields, unknown fields
 * in strict mode, immutability aside). Computed and auto-assigned fields are the service's to
 * fill and are not checked; reference targets are checked elsewhere, a batch at a time. Pure.
 */
export function recordProblems(schema: ProposedSchema, data: Record<string, unknown>): FieldError[] {
  return [...prepareRecordData(schema, 'patch', {}, data).issues.list];
}

const SECRET_MESSAGE = 'does not fit (a secret field: the reason is not shown)';

/**
 * The problems, with the message of any problem at a secret field (secret before or after the
 * change) replaced: a message may quote the value, and the caller may not hold secrets:reveal.
 */
export function withoutSecretValues(
  problems: readonly FieldError[],
  ...definitions: readonly (readonly PropertyDefinition[])[]
): FieldError[] {
  const tops = new Set(definitions.flatMap((d) => secretPaths(d).map((p) => p.split(/[.[]/)[0]!)));
  if (tops.size === 0) return [...problems];
  return problems.map((p) => {
    const top = /^data\.([^.[]+)/.exec(p.field)?.[1];
    return top !== undefined && tops.has(top) ? { field: p.field, message: SECRET_MESSAGE } : p;
  });
}

/** The reference values of one record's data, per reference property of the schema (as strings). */
export function referenceValues(
  properties: readonly PropertyDefinition[],
  data: Record<string, unknown>,
): { property: ReferenceProperty; values: string[] }[] {
  return properties
    .filter((p): p is ReferenceProperty => p.type === 'reference')
    .flatMap((property) => {
      const value = own(data, property.name);
      if (value === undefined || value === null) return [];
      const values = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
      return values.length ? [{ property, values }] : [];
    });
}

/** Counts and a bounded sample of the records that fail, as they are found. */
export class FailureTally {
  checked = 0;
  failed = 0;
  readonly byField: Record<string, number> = {};
  readonly sample: { id: string; errors: FieldError[] }[] = [];

  constructor(
    readonly sampleSize: number,
    private readonly errorsPerRecord: number,
    /** Fields counted at most (paths inside arrays are many): later fields are left out of `byField`. */
    private readonly maxFields: number,
  ) {}

  add(id: string, problems: readonly FieldError[]): void {
    if (problems.length === 0) return;
    this.failed++;
    for (const field of new Set(problems.map((p) => p.field))) {
      const seen = Object.hasOwn(this.byField, field);
      if (seen || Object.keys(this.byField).length < this.maxFields)
        this.byField[field] = (this.byField[field] ?? 0) + 1;
    }
    if (this.sample.length < this.sampleSize) this.sample.push({ id, errors: problems.slice(0, this.errorsPerRecord) });
  }
}
