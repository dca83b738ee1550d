import type { PropertyDefinition, ReferenceProperty } from '@strata/contracts';
import { at, show, type Issues } from './issues.js';

/** A collection that references may point at: its slug and top-level properties. */
export interface ReferenceTarget {
  readonly recordSlug: string;
  readonly properties: readonly PropertyDefinition[];
}

export interface ReferenceContext {
  /** recordSlug of the collection being defined. */
  readonly collectionSlug: string;
  /** The other live collections of the same workspace, by recordSlug. */
  readonly collections: ReadonlyMap<string, ReferenceTarget>;
}

/** Record columns a reference may name as targetField or displayField without a property. */
const SYSTEM_FIELDS = new Set(['id']);

/**
 * Checks the top-level references of a collection: the target exists in the
 * workspace, targetField and displayField exist on it, and no circular chain
 * (A → B → A, of any length) is formed. A collection referencing itself (a
 * parent/child tree) is allowed: it is one collection, not a chain.
 */
export function checkReferences(
  properties: readonly PropertyDefinition[],
  inputIndexes: readonly number[],
  path: string,
  ctx: ReferenceContext,
  issues: Issues,
): void {
  properties.forEach((property, i) => {
    if (property.type !== 'reference') return;
    const field = at(path, inputIndexes[i] ?? i);
    const target =
      property.target === ctx.collectionSlug
        ? { recordSlug: ctx.collectionSlug, properties }
        : ctx.collections.get(property.target);
    if (!target) {
      issues.add(at(field, 'target'), `names no collection in this workspace: ${show(property.target)}`);
      return;
    }
    const byName = new Map(target.properties.map((p) => [p.name, p]));
    for (const key of ['targetField', 'displayField'] as const) {
      const name = property[key];
      if (name === undefined || SYSTEM_FIELDS.has(name)) continue;
      const named = byName.get(name);
      if (!named) issues.add(at(field, key), `names no property of ${property.target}: ${show(name)}`);
      // A reference holds (and shows) the target's value in plain: never a secret.
      else if (named.type === 'string' && named.isSecret)
        issues.add(at(field, key), `names a secret field: ${show(name)}`);
    }
    if (property.target !== ctx.collectionSlug) {
      const cycle = pathBack(property.target, ctx);
      if (cycle) {
        issues.add(
          at(field, 'target'),
          `would form a circular reference: ${[ctx.collectionSlug, ...cycle].join(' → ')}`,
        );
      }
    }
  });
}

/** The chain of references from `start` back to the collection being defined, if there is one. */
function pathBack(start: string, ctx: ReferenceContext): string[] | undefined {
  const seen = new Set<string>();
  const walk = (slug: string): string[] | undefined => {
    if (slug === ctx.collectionSlug) return [slug];
    if (seen.has(slug)) return undefined;
    seen.add(slug);
    for (const next of targetsOf(ctx.collections.get(slug)?.properties ?? [])) {
      if (next === slug) continue;
      const rest = walk(next);
      if (rest) return [slug, ...rest];
    }
    return undefined;
  };
  return walk(start);
}

export function targetsOf(properties: readonly PropertyDefinition[]): string[] {
  return properties.filter((p): p is ReferenceProperty => p.type === 'reference').map((p) => p.target);
}
