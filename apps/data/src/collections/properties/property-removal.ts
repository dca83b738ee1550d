import type { FieldError, PropertyDefinition, ReferenceProperty } from '@strata/contracts';
import type { Dependent } from '../collection-rules.js';

/** What a property removal needs to know of the collection. */
export interface RemovalSubject {
  readonly recordSlug: string;
  readonly properties: readonly PropertyDefinition[];
  readonly defaultSearchField?: string | undefined;
}

export interface RemovalProblems {
  /** Names the collection has no property of (400). */
  readonly unknown: FieldError[];
  /** Properties that cannot go while something else names them, or at all (409). */
  readonly conflicts: FieldError[];
}

/**
 * Why the named top-level properties cannot be removed, one entry per name and reason
 * (`names[i]`): unknown names; immutable properties; properties another collection's
 * reference names as `targetField` or `displayField` (`dependents`), or a reference of this
 * collection to itself that stays; the collection's `defaultSearchField`. Pure.
 */
export function removalProblems(
  subject: RemovalSubject,
  names: readonly string[],
  dependents: readonly Dependent[],
): RemovalProblems {
  const byName = new Map(subject.properties.map((p) => [p.name, p]));
  const going = new Set(names);
  const selfReferences: Dependent[] = subject.properties
    .filter((p): p is ReferenceProperty => p.type === 'reference' && p.target === subject.recordSlug)
    .filter((p) => !going.has(p.name))
    .flatMap((p) =>
      [p.targetField, p.displayField]
        .filter((f): f is string => f !== undefined)
        .map((field) => ({ collection: subject.recordSlug, property: p.name, field })),
    );
  const unknown: FieldError[] = [];
  const conflicts: FieldError[] = [];
  names.forEach((name, i) => {
    const field = `names[${i}]`;
    const property = byName.get(name);
    if (!property) {
      unknown.push({ field, message: `the collection has no property '${name}'` });
      return;
    }
    if (property.immutable) conflicts.push({ field, message: `'${name}' is immutable and cannot be removed` });
    const holders = [...dependents, ...selfReferences].filter((d) => d.field === name);
    for (const h of new Set(holders.map((d) => `${d.collection}.${d.property}`))) {
      conflicts.push({ field, message: `'${name}' is named by the reference ${h} (targetField or displayField)` });
    }
    if (subject.defaultSearchField === name) {
      conflicts.push({ field, message: `'${name}' is the collection's defaultSearchField` });
    }
  });
  return { unknown, conflicts };
}

/** `properties` with the named ones no longer required (their values are about to go). */
export function relaxed(properties: readonly PropertyDefinition[], names: ReadonlySet<string>): PropertyDefinition[] {
  return properties.map((p) => (names.has(p.name) && p.required ? { ...p, required: false } : p));
}
