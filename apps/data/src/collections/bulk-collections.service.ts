import { Injectable } from '@nestjs/common';
import { ErrorCode, type Collection, type FieldError, type PropertyDefinition } from '@strata/contracts';
import { Transactions, type WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import { checkBody } from '../schema/checked-body.js';
import { isPlainObject } from '../schema/issues.js';
import { CollectionsRepository } from './collections.repository.js';
import { CollectionsService, dependentsOf } from './collections.service.js';
import { CreateCollectionRequest } from './dto/collection.requests.js';
import { PropertyIndexer } from './indexes/property-indexer.js';

/**
 * The spec's bulk operations on collections: create many, delete many, remove properties. Each
 * is one transaction under the workspace's schema lock: all of it happens, or none.
 */
@Injectable()
export class BulkCollectionsService {
  constructor(
    private readonly transactions: Transactions,
    private readonly repository: CollectionsRepository,
    private readonly collections: CollectionsService,
    private readonly indexes: PropertyIndexer,
  ) {}

  /**
   * Creates the collections in order, so a later one may reference an earlier one. Every
   * problem of every definition comes in one 400 (`structures[i].…`), and nothing is created.
   */
  async createMany(
    scope: WorkspaceScope,
    actor: string,
    items: readonly unknown[],
  ): Promise<{ results: Collection[] }> {
    // An item that is no object has nothing to check field by field: one entry names it.
    const notObjects = items.flatMap((item, i) =>
      isPlainObject(item)
        ? []
        : [{ field: `structures[${i}]`, message: 'must be an object (a collection definition)' }],
    );
    if (notObjects.length) throw StrataException.validation(notObjects, 'No collection was created');
    const checked = await Promise.all(items.map((item) => checkBody(CreateCollectionRequest, item)));
    const created = await this.transactions.run(async (tx) => {
      const problems: FieldError[] = [];
      const results: Collection[] = [];
      for (const [i, { body, problems: own }] of checked.entries()) {
        try {
          results.push(await this.collections.create(scope, actor, body, own, tx));
        } catch (error) {
          if (!(error instanceof StrataException)) throw error;
          if (error.code === ErrorCode.VALIDATION_ERROR && Array.isArray(error.details)) {
            problems.push(...error.details.map((d) => ({ field: `structures[${i}].${d.field}`, message: d.message })));
            continue;
          }
          if (error.status === 409) throw StrataException.conflict(`structures[${i}]: ${error.message}`);
          throw error;
        }
      }
      if (problems.length) throw StrataException.validation(problems, 'No collection was created');
      return results;
    });
    for (const c of created) this.indexes.schedule(c.id);
    return { results: created };
  }

  /**
   * Soft-deletes the collections together: 404 naming every id the workspace has no live
   * collection of, 409 while a collection outside the set references one inside it.
   */
  async deleteMany(
    scope: WorkspaceScope,
    actor: string,
    ids: readonly string[],
  ): Promise<{ success: true; deleted: { id: string; deletedAt: string }[] }> {
    const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
    const deleted = await this.transactions.run(async (tx) => {
      const all = await this.repository.lockWorkspace(scope, tx, true);
      const missing = unique.filter((id) => !all.some((c) => c.id === id));
      if (missing.length) {
        throw StrataException.notFound(`Collections not found: ${missing.join(', ')}`, ErrorCode.STRUCTURE_NOT_FOUND);
      }
      const going = new Set(unique);
      const staying = all.filter((c) => !going.has(c.id));
      const blocked = all
        .filter((c) => going.has(c.id))
        .flatMap((c) =>
          dependentsOf(c.record_slug, staying).map((d) => `'${c.record_slug}' by ${d.collection}.${d.property}`),
        );
      if (blocked.length) {
        throw StrataException.conflict(`Collections are referenced: ${[...new Set(blocked)].join(', ')}`);
      }
      const out: { id: string; deletedAt: string }[] = [];
      for (const id of unique) {
        out.push({ id, deletedAt: (await this.repository.softDelete(scope, tx, id, actor)).toISOString() });
      }
      return out;
    });
    for (const { id } of deleted) this.indexes.schedule(id);
    return { success: true, deleted };
  }

  /**
   * Removes top-level properties by name, as a PUT of the rest would (immutable properties and
   * those another collection's reference names stay, with a 400 naming each); a name the
   * collection does not have is a 400 too.
   */
  async removeProperties(
    scope: WorkspaceScope,
    id: string,
    actor: string,
    names: readonly string[],
  ): Promise<Collection> {
    const updated = await this.transactions.run(async (tx) => {
      const current = await this.repository.find(scope, { id }, { tx, lock: true });
      const known = new Set(current.properties.map((p) => p.name));
      const unknown = names
        .map((name, i) => ({ name, i }))
        .filter(({ name }) => !known.has(name))
        .map(({ name, i }) => ({ field: `names[${i}]`, message: `the collection has no property '${name}'` }));
      if (unknown.length) throw StrataException.validation(unknown);
      const gone = new Set(names);
      const properties: PropertyDefinition[] = current.properties.filter((p) => !gone.has(p.name));
      return this.collections.update(scope, id, actor, { properties }, tx);
    });
    this.indexes.schedule(id);
    return updated;
  }
}
