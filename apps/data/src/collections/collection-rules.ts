import type { PropertyDefinition, SchemaDiscoveryMode } from '@strata/contracts';
import { at, type Issues } from '../schema/issues.js';
import { canonicalJson } from '../schema/value-check.js';

/** `Blog Posts (2026)!` → `blog-posts-2026`; never empty. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return slug || 'collection';
}

/** The first of `base`, `base-2`, `base-3`, … not in `taken`. */
export function freeSlug(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/**
 * The discovery mode from the request: `schemaDiscoveryMode`, or the older
 * boolean `isStrict` (true = strict, false = auto-evolving); both given must agree.
 */
export function discoveryMode(
  body: { schemaDiscoveryMode?: SchemaDiscoveryMode | undefined; isStrict?: boolean | undefined },
  issues: Issues,
): SchemaDiscoveryMode | undefined {
  if (body.isStrict === undefined) return body.schemaDiscoveryMode;
  const fromFlag: SchemaDiscoveryMode = body.isStrict ? 'strict' : 'auto-evolving';
  if (body.schemaDiscoveryMode !== undefined && (body.schemaDiscoveryMode === 'strict') !== body.isStrict) {
    issues.add('isStrict', `contradicts schemaDiscoveryMode ${body.schemaDiscoveryMode} (isStrict is its older form)`);
  }
  return body.schemaDiscoveryMode ?? fromFlag;
}

/** defaultSearchField must name a top-level string property that is not secret (its values are encrypted). */
export function checkDefaultSearchField(
  field: string | undefined,
  properties: readonly PropertyDefinition[],
  issues: Issues,
): void {
  if (field === undefined) return;
  const property = properties.find((p) => p.name === field);
  if (!property) issues.add('defaultSearchField', `names no property of this collection: "${field}"`);
  else if (property.type !== 'string')
    issues.add('defaultSearchField', `must name a string property ("${field}" is ${property.type})`);
  else if (property.isSecret)
    issues.add('defaultSearchField', `must not name a secret property: "${field}" is stored encrypted`);
}

/** Immutable properties cannot be removed or changed once the collection exists. */
export function checkImmutable(
  before: readonly PropertyDefinition[],
  after: readonly PropertyDefinition[],
  issues: Issues,
): void {
  for (const old of before) {
    if (!old.immutable) continue;
    const index = after.findIndex((p) => p.id === old.id || p.name === old.name);
    if (index === -1) issues.add('properties', `"${old.name}" is immutable and cannot be removed`);
    else if (canonicalJson(after[index]) !== canonicalJson(old)) {
      issues.add(at('properties', index), `"${old.name}" is immutable and cannot be changed`);
    }
  }
}

/** Another collection's reference that names this collection and a field of it. */
export interface Dependent {
  readonly collection: string;
  readonly property: string;
  readonly field: string;
}

/** Fields that other collections' references name (targetField, displayField) must stay, and stay plain. */
export function checkDependents(
  after: readonly PropertyDefinition[],
  dependents: readonly Dependent[],
  issues: Issues,
): void {
  const byName = new Map(after.map((p) => [p.name, p]));
  for (const d of dependents) {
    const property = byName.get(d.field);
    if (d.field !== 'id' && !property) {
      issues.add(
        'properties',
        `"${d.field}" is used by the reference ${d.collection}.${d.property} and cannot be removed`,
      );
    } else if (property?.type === 'string' && property.isSecret) {
      issues.add(
        'properties',
        `"${d.field}" is used by the reference ${d.collection}.${d.property} and cannot become secret`,
      );
    }
  }
}
