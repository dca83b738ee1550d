import type { DataSource, EntityManager } from 'typeorm';

declare const txBrand: unique symbol;

/**
 * An open transaction, as services see it: a handle they pass to repository
 * methods, with no way to run SQL on it themselves. Only repositories (the
 * files ESLint lets import TypeORM) turn it back into an EntityManager.
 */
export interface Tx {
  readonly [txBrand]: true;
}

/** Opens transactions for services, which never hold a DataSource themselves. */
export class Transactions {
  constructor(private readonly db: DataSource) {}

  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back
   * when it throws. Every statement of `work` goes through `tx`: one that takes
   * another pooled connection meanwhile is reported (pool-guard.ts).
   */
  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    // Marked as a transaction by the pool guard's wrapper of TypeORM's `transaction()` (pool-guard.ts).
    return this.db.transaction((manager) => work(manager as unknown as Tx));
  }

  /**
   * Runs `work` inside a savepoint of `tx`: when it throws, only its own
   * changes are rolled back and the error goes on to the caller, whose
   * transaction stays usable (one item of a bulk request, say).
   */
  async savepoint<T>(tx: Tx, work: () => Promise<T>): Promise<T> {
    const manager = managerOf(this.db, tx);
    await manager.query('SAVEPOINT strata_item');
    try {
      const result = await work();
      await manager.query('RELEASE SAVEPOINT strata_item');
      return result;
    } catch (err) {
      await manager.query('ROLLBACK TO SAVEPOINT strata_item');
      throw err;
    }
  }
}

/** The manager a repository runs a statement on: the transaction's when there is one, else the pool's. */
export function managerOf(db: DataSource, tx: Tx | undefined): EntityManager {
  return tx === undefined ? db.manager : (tx as unknown as EntityManager);
}
