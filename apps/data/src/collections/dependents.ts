import type { ReferenceProperty } from '@strata/contracts';
import type { Dependent } from './collection-rules.js';
import type { CollectionRow } from './collections.repository.js';

/** The references of other collections that point at `recordSlug`, with each field they name. */
export function dependentsOf(recordSlug: string, others: readonly CollectionRow[]): Dependent[] {
  return others.flatMap((c) =>
    c.properties
      .filter((p): p is ReferenceProperty => p.type === 'reference' && p.target === recordSlug)
      .flatMap((p) =>
        [p.targetField, p.displayField]
          .filter((f): f is string => f !== undefined)
          .map((field) => ({ collection: c.record_slug, property: p.name, field })),
      ),
  );
}
