import { ErrorCode, type Collection } from '@strata/contracts';
import { StrataException } from '@strata/platform';

/**
 * A write refused because its collection is `inactive`. Bulk operations let it end
 * the whole request (rolled back) rather than report it per item: the collection,
 * not one item, is what refuses.
 */
export class InactiveCollection extends StrataException {
  constructor(c: Collection) {
    super(
      ErrorCode.CONFLICT,
      `Collection '${c.recordSlug}' is inactive: its records can be read but not written (set its status to active to write)`,
      { structureId: c.id, recordSlug: c.recordSlug, status: c.status },
    );
  }
}

/** Record writes (create, update, upsert, bulk, batch, delete, restore) need an active collection. */
export function refuseInactive(c: Collection): void {
  if (c.status === 'inactive') throw new InactiveCollection(c);
}
