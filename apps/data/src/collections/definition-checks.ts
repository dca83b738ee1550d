import type { FieldError, PropertyDefinition, SchemaDiscoveryMode } from '@strata/contracts';
import { newUuid } from '@strata/crypto';
import { Issues } from '../schema/issues.js';
import type { ReferenceTarget } from '../schema/references.js';
import { validateProperties } from '../schema/validate-properties.js';
import {
  checkDefaultSearchField,
  checkDependents,
  checkImmutable,
  discoveryMode,
  freeSlug,
  slugify,
} from './collection-rules.js';
import type { CollectionRow } from './collections.repository.js';
import { dependentsOf } from './dependents.js';
import type { CreateCollectionRequest, UpdateCollectionRequest } from './dto/collection.requests.js';

/** A definition as a create or an update would store it, with every problem found in it. */
export interface CheckedDefinition {
  readonly recordSlug: string;
  readonly mode: SchemaDiscoveryMode | undefined;
  readonly properties: PropertyDefinition[];
  readonly issues: readonly FieldError[];
}

/** A collection change as the update would store it: the definition, and the defaultSearchField in force. */
export interface CheckedChange extends CheckedDefinition {
  readonly defaultSearchField: string | undefined;
}

/** The workspace's collections as reference targets, by recordSlug. */
export function targets(rows: readonly CollectionRow[]): ReadonlyMap<string, ReferenceTarget> {
  return new Map(rows.map((r) => [r.record_slug, { recordSlug: r.record_slug, properties: r.properties }]));
}

/**
 * Checks the body of `POST /structures` against the workspace's live collections (`others`):
 * `earlier` are the body's own problems (checkBody). Whether an explicit recordSlug is taken
 * is the caller's to say (a create answers 409 for it). Pure, but for the ids it generates.
 */
export function checkNewCollection(
  body: CreateCollectionRequest,
  earlier: readonly FieldError[],
  others: readonly CollectionRow[],
): CheckedDefinition {
  const taken = new Set(others.map((c) => c.record_slug));
  const recordSlug = body.recordSlug ?? freeSlug(slugify(body.name ?? ''), taken);
  const issues = new Issues();
  earlier.forEach((e) => issues.add(e.field, e.message));
  const mode = discoveryMode(body, issues);
  const { properties, issues: propertyIssues } = validateProperties(body.properties ?? [], {
    collectionSlug: recordSlug,
    collections: targets(others),
    newId: newUuid,
  });
  propertyIssues.list.forEach((i) => issues.add(i.field, i.message));
  checkDefaultSearchField(body.defaultSearchField, properties, issues);
  return { recordSlug, mode, properties, issues: issues.list };
}

/**
 * Checks the body of `PUT /structures/{id}` against the collection (`current`) and the
 * workspace's other live collections: the update's own check (it stores the result) and
 * `POST /structures/{id}/validate`'s, so the two cannot differ. Pure, but for the ids it
 * generates.
 */
export function checkCollectionChange(
  body: UpdateCollectionRequest,
  earlier: readonly FieldError[],
  current: CollectionRow,
  others: readonly CollectionRow[],
): CheckedChange {
  const issues = new Issues();
  earlier.forEach((e) => issues.add(e.field, e.message));
  if (body.recordSlug !== undefined && body.recordSlug !== current.record_slug) {
    issues.add('recordSlug', `is fixed at creation and cannot be changed (it is '${current.record_slug}')`);
  }
  const mode = discoveryMode(body, issues);
  let properties = current.properties;
  if (body.properties !== undefined) {
    const validated = validateProperties(body.properties, {
      collectionSlug: current.record_slug,
      collections: targets(others),
      newId: newUuid,
    });
    validated.issues.list.forEach((i) => issues.add(i.field, i.message));
    properties = validated.properties;
    checkImmutable(current.properties, properties, issues);
    checkDependents(properties, dependentsOf(current.record_slug, others), issues);
  }
  const defaultSearchField =
    body.defaultSearchField !== undefined ? body.defaultSearchField : (current.default_search_field ?? undefined);
  checkDefaultSearchField(defaultSearchField, properties, issues);
  return { recordSlug: current.record_slug, mode, properties, defaultSearchField, issues: issues.list };
}
