import { Injectable } from '@nestjs/common';
import type { Collection, ReferenceProperty } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { StrataException, type Grants } from '@strata/platform';
import { CollectionsRepository } from '../collections/collections.repository.js';
import type { TypedWhere } from '../compiler/compile-where.js';
import { own } from '../schema/issues.js';
import { RecordPresenter } from './record-presenter.js';
import { RecordsRepository } from './records.repository.js';

export const EXPAND_LIMITS = { maxPaths: 10, maxDepth: 3 } as const;

/** `author,author.company` → [['author'], ['author', 'company']]; checked for shape and limits. */
export function parseExpand(expand: string | undefined): string[][] {
  if (expand === undefined || expand.trim() === '') return [];
  const paths = expand.split(',').map((p) => p.trim().split('.'));
  const bad = paths.find((p) => p.some((s) => !/^[A-Za-z][A-Za-z0-9_]*$/.test(s)));
  if (bad) throw StrataException.validation([{ field: 'expand', message: `is not a field path: "${bad.join('.')}"` }]);
  if (paths.length > EXPAND_LIMITS.maxPaths) {
    throw StrataException.validation([{ field: 'expand', message: `names at most ${EXPAND_LIMITS.maxPaths} paths` }]);
  }
  if (paths.some((p) => p.length > EXPAND_LIMITS.maxDepth)) {
    throw StrataException.validation([
      { field: 'expand', message: `paths go at most ${EXPAND_LIMITS.maxDepth} levels deep` },
    ]);
  }
  return paths;
}

interface Expanded {
  id: string;
  data: Record<string, unknown>;
}

/**
 * Puts referenced records under `data._expanded.<field>` ({id, data}, an array
 * for many-to-many, null when the target is gone), following dotted paths into
 * the referenced records' own references. One query per reference field and
 * level, whatever the number of records.
 */
@Injectable()
export class RecordExpander {
  constructor(
    private readonly records: RecordsRepository,
    private readonly collections: CollectionsRepository,
    private readonly presenter: RecordPresenter,
  ) {}

  /**
   * `filters` (top-level relations only) keep the referenced records that match
   * a condition; the others expand to null, as a missing record would.
   */
  async expand(
    scope: WorkspaceScope,
    c: Collection,
    datas: Record<string, unknown>[],
    paths: string[][],
    grants: Grants,
    filters: ReadonlyMap<string, TypedWhere> = new Map(),
  ): Promise<void> {
    const byField = new Map<string, string[][]>();
    for (const [head, ...rest] of paths) {
      if (head === undefined) continue;
      byField.set(head, [...(byField.get(head) ?? []), ...(rest.length ? [rest] : [])]);
    }
    for (const [field, nested] of byField) {
      const property = c.properties.find((p): p is ReferenceProperty => p.name === field && p.type === 'reference');
      if (!property) {
        throw StrataException.validation([
          { field: 'expand', message: `"${field}" is not a reference field of ${c.recordSlug}` },
        ]);
      }
      const target = await this.collections.find(scope, { slug: property.target });
      // Records of a collection the caller may not read are absent to it: they expand to null,
      // as a referenced record that does not exist does (docs/identity.md).
      const visible = readable(grants, target);
      const keys = visible ? [...new Set(datas.flatMap((d) => toKeys(own(d, field))))] : [];
      const found = await this.load(scope, target, property, keys, grants, filters.get(field));
      if (nested.length) {
        await this.expand(
          scope,
          target,
          [...found.values()].map((e) => e.data),
          nested,
          grants,
        );
      }
      for (const data of datas) {
        const value = own(data, field);
        if (value === undefined || value === null) continue;
        const keys = toKeys(value);
        const expanded = Array.isArray(value) ? keys.map((k) => found.get(k) ?? null) : (found.get(keys[0]!) ?? null);
        const previous = data['_expanded'];
        data['_expanded'] = {
          ...(typeof previous === 'object' && previous !== null ? previous : {}),
          [field]: expanded,
        };
      }
    }
  }

  private async load(
    scope: WorkspaceScope,
    target: Collection,
    property: ReferenceProperty,
    keys: string[],
    grants: Grants,
    filter: TypedWhere | undefined,
  ): Promise<Map<string, Expanded>> {
    if (keys.length === 0) return new Map();
    const rows = await this.records.byKeys(scope, target, property.targetField, keys, filter);
    const out = new Map<string, Expanded>();
    for (const row of rows) {
      out.set(row.key, { id: row.id, data: await this.presenter.data(target, row.id, row.data, grants) });
    }
    return out;
  }
}

/** Whether the caller may read the target's records: one at a time or in lists. */
function readable(grants: Grants, target: Collection): boolean {
  return grants.canOnCollection('retrieve', target.recordSlug) || grants.canOnCollection('list', target.recordSlug);
}

/** Reference values are ids or targetField values: strings or numbers. */
function toKeys(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const list: unknown[] = Array.isArray(value) ? value : [value];
  return list.filter((v): v is string | number => typeof v === 'string' || typeof v === 'number').map(String);
}
