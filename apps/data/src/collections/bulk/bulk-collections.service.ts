import { Injectable } from '@nestjs/common';
import { ErrorCode, type Collection, type FieldError } from '@strata/contracts';
import { Transactions, type WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import { checkBody } from '../../schema/checked-body.js';
import { isPlainObject } from '../../schema/issues.js';
import { freeSlug, slugify } from '../collection-rules.js';
import { CollectionsRepository, type CollectionRow } from '../collections.repository.js';
import { CollectionsService } from '../collections.service.js';
import { CreateCollectionRequest } from '../dto/collection.requests.js';
import { PropertyIndexer } from '../indexes/property-indexer.js';
import { itemErrors, planCreation, planDeletion } from './bulk-plan.js';
import { MAX_BULK_DELETE } from './bulk.requests.js';

/** The key a bulk create's definitions came under: `structures` or `collections`. */
export type BulkKey = 'structures' | 'collections';

/** One collection a bulk delete removed. */
export interface DeletedCollection {
  readonly id: string;
  readonly recordSlug: string;
  readonly deletedAt: string;
}

/** One item of a bulk delete that was refused: its place in the request and why. */
export interface RefusedDeletion {
  readonly field: string;
  readonly error: { readonly code: ErrorCode; readonly message: string };
}

export interface BulkDeleteResult {
  /** True when every item was deleted. */
  readonly success: boolean;
  readonly deleted: DeletedCollection[];
  readonly failed: number;
  readonly errors: RefusedDeletion[];
}

/**
 * Creating and deleting many collections in one call. Each call is one transaction under the
 * workspace's schema lock: a bulk create happens entirely or not at all, a bulk delete removes
 * every item it may in one go and reports the others.
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
   * Creates the collections, all or none. A collection may reference another one of the same
   * call in any order (each is created after those it references); a cycle among them is
   * refused as a single create refuses it. Every problem of every definition comes in one 400
   * (`<key>[i].…`); a taken slug is a 409 naming the item. Answers in the request's order.
   */
  async createMany(
    scope: WorkspaceScope,
    actor: string,
    key: BulkKey,
    items: readonly unknown[],
  ): Promise<{ results: Collection[] }> {
    // An item that is no object has nothing to check field by field: one entry names it.
    const notObjects = items.flatMap((item, i) =>
      isPlainObject(item) ? [] : [{ field: `${key}[${i}]`, message: 'must be an object (a collection definition)' }],
    );
    if (notObjects.length) throw StrataException.validation(notObjects, 'No collection was created');
    const checked = await Promise.all(items.map((item) => checkBody(CreateCollectionRequest, item)));
    const created = await this.transactions.run(async (tx) => {
      const live = await this.repository.lockWorkspace(scope, tx);
      // Slugs first, in the request's order, so that a reference may name the slug another item
      // of the call generates from its name.
      // A generated slug never takes one another item of the call asks for.
      const taken = new Set([
        ...live.map((c) => c.record_slug),
        ...checked.flatMap(({ body }) => (body.recordSlug !== undefined ? [body.recordSlug] : [])),
      ]);
      const slugs = checked.map(({ body }) => {
        if (body.recordSlug !== undefined) return body.recordSlug;
        const slug = freeSlug(slugify(body.name ?? ''), taken);
        taken.add(slug);
        return slug;
      });
      const plan = planCreation(
        items.map((item, i) => ({ recordSlug: slugs[i]!, properties: own(item, 'properties') })),
      );
      const problems: FieldError[] = plan.cycles.map((c) => ({
        field: `${key}[${c.index}].${c.field}`,
        message: c.message,
      }));
      const reported = new Set(problems.map((p) => p.field));
      const results: Collection[] = [];
      for (const i of plan.order) {
        const { body, problems: earlier } = checked[i]!;
        try {
          const withSlug = Object.assign(new CreateCollectionRequest(), body, { recordSlug: slugs[i] });
          results[i] = await this.collections.create(scope, actor, withSlug, earlier, tx);
        } catch (error) {
          if (!(error instanceof StrataException)) throw error;
          if (error.code === ErrorCode.VALIDATION_ERROR && Array.isArray(error.details)) {
            problems.push(...itemErrors(key, i, error.details).filter((p) => !reported.has(p.field)));
            continue;
          }
          if (error.status === 409) throw StrataException.conflict(`${key}[${i}]: ${error.message}`);
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
   * Soft-deletes collections named by id or by recordSlug, each as a single delete would: one
   * referenced by a collection that stays is refused (409, naming the references), unless the
   * referencing collection is deleted in the same call; one the workspace does not have is a
   * 404. The others go together, in one transaction. Answers per item.
   */
  async deleteMany(
    scope: WorkspaceScope,
    actor: string,
    ids: readonly string[],
    slugs: readonly string[],
  ): Promise<BulkDeleteResult> {
    const items = [
      ...ids.map((id, i) => ({
        field: `ids[${i}]`,
        match: (c: { id: string }) => c.id === id.toLowerCase(),
        name: id,
      })),
      ...slugs.map((slug, i) => ({
        field: `slugs[${i}]`,
        match: (c: { record_slug: string }) => c.record_slug === slug,
        name: `'${slug}'`,
      })),
    ];
    if (items.length === 0 || items.length > MAX_BULK_DELETE) {
      throw StrataException.validation([
        { field: 'ids', message: `name 1 to ${MAX_BULK_DELETE} collections in ids and slugs together` },
      ]);
    }
    const result = await this.transactions.run(async (tx) => {
      const all = await this.repository.lockWorkspace(scope, tx, true);
      const found = items.map((item) => all.find((c) => item.match(c)));
      // A collection whose migration runs stays (a single delete answers 409), and keeps what it references.
      const plan = planDeletion(
        all.map((c) => ({ id: c.id, recordSlug: c.record_slug, properties: c.properties })),
        new Set(found.flatMap((c) => (c && !c.metadata.migrationInProgress ? [c.id] : []))),
      );
      const deletedAt = new Map<string, string>();
      for (const id of plan.going) {
        deletedAt.set(id, (await this.repository.softDelete(scope, tx, id, actor)).toISOString());
      }
      const deleted: DeletedCollection[] = [];
      const errors: RefusedDeletion[] = [];
      const listed = new Set<string>();
      items.forEach((item, i) => {
        const c = found[i];
        if (!c) {
          errors.push({
            field: item.field,
            error: { code: ErrorCode.STRUCTURE_NOT_FOUND, message: `Collection ${item.name} not found` },
          });
          return;
        }
        if (c.metadata.migrationInProgress) {
          errors.push({ field: item.field, error: { code: ErrorCode.CONFLICT, message: migrating(c) } });
          return;
        }
        const holders = plan.blocked.get(c.id);
        if (holders) {
          const names = [...new Set(holders.map((d) => `${d.collection}.${d.property}`))].join(', ');
          errors.push({
            field: item.field,
            error: { code: ErrorCode.CONFLICT, message: `Collection '${c.record_slug}' is referenced by ${names}` },
          });
          return;
        }
        if (listed.has(c.id)) return; // named twice (by id and by slug): listed once
        listed.add(c.id);
        deleted.push({ id: c.id, recordSlug: c.record_slug, deletedAt: deletedAt.get(c.id)! });
      });
      return { success: errors.length === 0, deleted, failed: errors.length, errors };
    });
    for (const { id } of result.deleted) this.indexes.schedule(id);
    return result;
  }
}

function migrating(c: CollectionRow): string {
  return `Collection '${c.record_slug}' is migrating its records (migration ${c.metadata.migrationJobId}): cancel it or wait for it before deleting`;
}

function own(item: unknown, key: string): unknown {
  return isPlainObject(item) && Object.hasOwn(item, key) ? item[key] : undefined;
}
