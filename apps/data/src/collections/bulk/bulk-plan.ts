import type { FieldError, PropertyDefinition, ReferenceProperty } from '@strata/contracts';
import { isPlainObject } from '../../schema/issues.js';
import type { Dependent } from '../collection-rules.js';

/** One definition of a bulk create: the slug it will take and the collections its references name. */
export interface PlannedCollection {
  readonly recordSlug: string;
  /** The raw `properties` of the request (not checked yet): only `{type: 'reference', target}` entries matter. */
  readonly properties: unknown;
}

export interface CreationPlan {
  /** Request indexes in an order where every collection comes after the ones of the same call it references. */
  readonly order: readonly number[];
  /** One entry per reference that closes a cycle among collections of the call (`properties[j].target`, relative to the item). */
  readonly cycles: readonly { readonly index: number; readonly field: string; readonly message: string }[];
}

/**
 * Orders the collections of a bulk create so that a collection referencing another one of the
 * same call is created after it, whatever their order in the request (ties keep the request's
 * order). References that form a cycle among them (A → B → A) are refused as the single create
 * refuses them; a collection referencing itself is no cycle. Pure.
 */
export function planCreation(items: readonly PlannedCollection[]): CreationPlan {
  const indexOf = new Map<string, number>();
  items.forEach((item, i) => {
    if (!indexOf.has(item.recordSlug)) indexOf.set(item.recordSlug, i);
  });
  const edges = items.map((item, i) =>
    referencesOf(item.properties)
      .map((r) => ({ ...r, to: indexOf.get(r.target) }))
      .filter((r): r is { property: number; target: string; to: number } => r.to !== undefined && r.to !== i),
  );
  const placed = new Set<number>();
  const order: number[] = [];
  for (let progress = true; progress;) {
    progress = false;
    for (let i = 0; i < items.length; i++) {
      if (placed.has(i) || !edges[i]!.every((e) => placed.has(e.to))) continue;
      placed.add(i);
      order.push(i);
      progress = true;
      break; // restart from the first index: earlier requests go first when both are ready
    }
  }
  const cycles: { index: number; field: string; message: string }[] = [];
  for (let i = 0; i < items.length; i++) {
    if (placed.has(i)) continue;
    for (const e of edges[i]!) {
      if (placed.has(e.to)) continue;
      const path = pathBetween(e.to, i, edges, placed);
      if (!path) continue;
      cycles.push({
        index: i,
        field: `properties[${e.property}].target`,
        message: `would form a circular reference: ${[i, ...path].map((k) => items[k]!.recordSlug).join(' → ')}`,
      });
    }
    order.push(i); // still created (and checked) after the others, to report its other problems
  }
  return { order, cycles };
}

/** The references among raw property definitions: index in the list and target slug. */
function referencesOf(properties: unknown): { property: number; target: string }[] {
  if (!Array.isArray(properties)) return [];
  return properties.flatMap((p: unknown, j) =>
    isPlainObject(p) && p['type'] === 'reference' && typeof p['target'] === 'string'
      ? [{ property: j, target: p['target'] }]
      : [],
  );
}

/** A chain of references from `from` to `to` among the unplaced items, `from` and `to` included. */
function pathBetween(
  from: number,
  to: number,
  edges: readonly { readonly to: number }[][],
  placed: ReadonlySet<number>,
): number[] | undefined {
  const seen = new Set<number>();
  const walk = (at: number): number[] | undefined => {
    if (at === to) return [at];
    if (seen.has(at) || placed.has(at)) return undefined;
    seen.add(at);
    for (const e of edges[at]!) {
      const rest = walk(e.to);
      if (rest) return [at, ...rest];
    }
    return undefined;
  };
  return walk(from);
}

/** A live collection as a bulk delete sees it. */
export interface DeletionCandidate {
  readonly id: string;
  readonly recordSlug: string;
  readonly properties: readonly PropertyDefinition[];
}

export interface DeletionPlan {
  /** Ids of the collections that go. */
  readonly going: ReadonlySet<string>;
  /** Ids of requested collections that stay, with the references (of collections that stay) that hold them. */
  readonly blocked: ReadonlyMap<string, readonly Dependent[]>;
}

/**
 * Which of the requested collections a bulk delete may remove, by the single delete's rule: a
 * collection referenced by another collection's reference property stays, unless that other
 * collection goes in the same call. A collection kept for that reason keeps the ones it
 * references in turn (until nothing changes). A collection's references to itself never block it. Pure.
 */
export function planDeletion(all: readonly DeletionCandidate[], requested: ReadonlySet<string>): DeletionPlan {
  const going = new Set(all.filter((c) => requested.has(c.id)).map((c) => c.id));
  const blocked = new Map<string, Dependent[]>();
  for (let changed = true; changed;) {
    changed = false;
    for (const c of all) {
      if (!going.has(c.id)) continue;
      const holders = referencesTo(
        c.recordSlug,
        all.filter((o) => o.id !== c.id && !going.has(o.id)),
      );
      if (holders.length === 0) continue;
      going.delete(c.id);
      blocked.set(c.id, holders);
      changed = true;
    }
  }
  return { going, blocked };
}

function referencesTo(recordSlug: string, others: readonly DeletionCandidate[]): Dependent[] {
  return others.flatMap((o) =>
    o.properties
      .filter((p): p is ReferenceProperty => p.type === 'reference' && p.target === recordSlug)
      .map((p) => ({ collection: o.recordSlug, property: p.name, field: p.targetField ?? 'id' })),
  );
}

/** Prefixes the fields of a definition's problems with the item's place in the request: `collections[2].name`. */
export function itemErrors(key: string, index: number, errors: readonly FieldError[]): FieldError[] {
  return errors.map((e) => ({ field: `${key}[${index}].${e.field}`, message: e.message }));
}
