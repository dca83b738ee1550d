import { Injectable } from '@nestjs/common';
import { ErrorCode, type Collection, type FieldError } from '@strata/contracts';
import { Transactions, type Tx, type WorkspaceScope } from '@strata/db';
import { StrataException } from '@strata/platform';
import { CollectionsRepository, toCollection } from '../collections.repository.js';
import { CollectionsService, dependentsOf } from '../collections.service.js';
import { PropertyIndexer } from '../indexes/property-indexer.js';
import { migrationRunning } from '../migrations/migration-starter.js';
import { relaxed, removalProblems } from './property-removal.js';
import { RecordValuesRepository } from './record-values.repository.js';

/** Records whose values one statement removes (each batch is its own short transaction). */
export const STRIP_BATCH = 1000;

export interface PropertyRemoval {
  readonly success: true;
  /** The collection without the properties. */
  readonly collection: Collection;
  /** How many records lost a value (0 unless `force`). */
  readonly valuesRemoved: number;
}

/**
 * `DELETE /structures/{id}/properties`: removes top-level properties by name. Refused (409)
 * while records hold values for them, unless forced; with `force`, the values go first, in
 * batches of short statements (record writes go on meanwhile), then the definition changes in
 * one transaction that also removes the values written while the batches ran.
 */
@Injectable()
export class PropertyRemovalService {
  constructor(
    private readonly transactions: Transactions,
    private readonly repository: CollectionsRepository,
    private readonly collections: CollectionsService,
    private readonly values: RecordValuesRepository,
    private readonly indexes: PropertyIndexer,
  ) {}

  async remove(
    scope: WorkspaceScope,
    id: string,
    actor: string,
    names: readonly string[],
    force: boolean,
  ): Promise<PropertyRemoval> {
    const fields = [...new Set(names)];
    const going = new Set(fields);
    // 1. The checks, without holding up record writes; forced, the properties stop being
    // required, so that a record whose value is gone can still be written while the rest go.
    const held = await this.transactions.run(async (tx) => {
      const current = await this.checked(scope, tx, id, names);
      const holders = await this.values.holders(scope, tx, id, fields);
      if (holders.size === 0) return 0;
      if (!force) throw heldConflict(names, holders);
      if (current.properties.some((p) => going.has(p.name) && p.required)) {
        await this.collections.update(scope, id, actor, { properties: relaxed(current.properties, going) }, tx);
      }
      return [...holders.values()].reduce((a, b) => a + b, 0);
    });
    // 2. The values, batch by batch.
    let valuesRemoved = 0;
    if (held > 0) {
      for (let after: string | undefined; ;) {
        const batch = await this.values.stripBatch(scope, id, fields, after, STRIP_BATCH);
        valuesRemoved += batch.stripped;
        if (batch.seen < STRIP_BATCH || batch.last === undefined) break;
        after = batch.last;
      }
    }
    // 3. The switch-over: the collection row locked (record writes wait), the values written
    // meanwhile removed (or, unforced, refused), then the definition without the properties.
    const collection = await this.transactions.run(async (tx) => {
      const current = await this.checked(scope, tx, id, names, true);
      if (force) valuesRemoved += await this.values.stripLive(scope, tx, id, fields);
      else if (await this.values.anyLiveHolder(scope, tx, id, fields)) {
        throw heldConflict(names, await this.values.holders(scope, tx, id, fields));
      }
      await this.values.dropUniqueValues(scope, tx, id, fields);
      const properties = current.properties.filter((p) => !going.has(p.name));
      return this.collections.update(scope, id, actor, { properties }, tx);
    });
    this.indexes.schedule(id);
    return { success: true, collection, valuesRemoved };
  }

  /** The collection, once the names are known to be removable: 404, 400 (unknown names) or 409 (a migration runs, or something names them). */
  private async checked(
    scope: WorkspaceScope,
    tx: Tx,
    id: string,
    names: readonly string[],
    forUpdate = false,
  ): Promise<Collection> {
    const all = await this.repository.lockWorkspace(scope, tx, forUpdate);
    const row = all.find((c) => c.id === id);
    if (!row) throw StrataException.notFound(`Collection ${id} not found`, ErrorCode.STRUCTURE_NOT_FOUND);
    // One properties change at a time: refused before any value is touched, forced or not.
    if (row.metadata.migrationInProgress) throw migrationRunning(row);
    const current = toCollection(row);
    const problems = removalProblems(
      current,
      names,
      dependentsOf(
        row.record_slug,
        all.filter((c) => c.id !== id),
      ),
    );
    if (problems.unknown.length) throw StrataException.validation(problems.unknown, 'No property was removed');
    if (problems.conflicts.length) {
      throw new StrataException(
        ErrorCode.CONFLICT,
        'The properties cannot be removed while something names them',
        problems.conflicts,
      );
    }
    return current;
  }
}

function heldConflict(names: readonly string[], holders: ReadonlyMap<string, number>): StrataException {
  const details: FieldError[] = names.flatMap((name, i) => {
    const n = holders.get(name) ?? 0;
    return n === 0
      ? []
      : [
          {
            field: `names[${i}]`,
            message: `${n} record${n === 1 ? ' holds a value' : 's hold values'} for '${name}': send force: true to remove the values with the property`,
          },
        ];
  });
  return new StrataException(ErrorCode.CONFLICT, 'Records hold values for the properties', details);
}
