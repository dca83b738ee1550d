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

/** What runs once a transaction of `Transactions.run` has committed, by transaction. */
const afterCommitHooks = new WeakMap<object, (() => void)[]>();

/**
 * Runs `hook` once `tx` has committed, and never if it rolls back (nor if the
 * savepoint it was registered in rolls back): for what must not happen for
 * changes that did not land, a metric of runs ended, say. Hooks run in the
 * order registered, right after COMMIT; one that throws does not stop the
 * others (it is reported as a process warning). `tx` must be open: a hook for a
 * transaction that has ended, or one not opened by `Transactions.run`, throws.
 */
export function afterCommit(tx: Tx, hook: () => void): void {
  const hooks = afterCommitHooks.get(tx);
  if (!hooks) throw new Error('afterCommit: not an open transaction of Transactions.run');
  hooks.push(hook);
}

/** Opens transactions for services, which never hold a DataSource themselves. */
export class Transactions {
  constructor(private readonly db: DataSource) {}

  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back
   * when it throws. Every statement of `work` goes through `tx`: one that takes
   * another pooled connection meanwhile is reported (pool-guard.ts). What
   * `afterCommit` registered runs once it committed.
   */
  async run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    const hooks: (() => void)[] = [];
    // Marked as a transaction by the pool guard's wrapper of TypeORM's `transaction()` (pool-guard.ts).
    const result = await this.db.transaction(async (manager) => {
      afterCommitHooks.set(manager, hooks);
      try {
        const value = await work(manager as unknown as Tx);
        // A statement that failed and was caught (outside a savepoint) has aborted the transaction,
        // and PostgreSQL answers the COMMIT with a rollback, not an error: with hooks waiting, one more
        // statement finds out, and the transaction fails as it really did.
        if (hooks.length > 0) await manager.query('SELECT 1');
        return value;
      } finally {
        afterCommitHooks.delete(manager);
      }
    });
    for (const hook of hooks) {
      try {
        hook();
      } catch (err) {
        // A hook's failure is its own: the transaction has committed, and the caller gets its result.
        process.emitWarning(`an afterCommit hook failed: ${String(err)}`, 'StrataAfterCommitWarning');
      }
    }
    return result;
  }

  /**
   * Runs `work` inside a savepoint of `tx`: when it throws, only its own
   * changes are rolled back and the error goes on to the caller, whose
   * transaction stays usable (one item of a bulk request, say).
   */
  async savepoint<T>(tx: Tx, work: () => Promise<T>): Promise<T> {
    const manager = managerOf(this.db, tx);
    const hooks = afterCommitHooks.get(tx);
    const registered = hooks?.length ?? 0;
    await manager.query('SAVEPOINT strata_item');
    try {
      const result = await work();
      await manager.query('RELEASE SAVEPOINT strata_item');
      return result;
    } catch (err) {
      await manager.query('ROLLBACK TO SAVEPOINT strata_item');
      // What the rolled-back work registered goes with its changes.
      if (hooks) hooks.length = registered;
      throw err;
    }
  }
}

/** The manager a repository runs a statement on: the transaction's when there is one, else the pool's. */
export function managerOf(db: DataSource, tx: Tx | undefined): EntityManager {
  return tx === undefined ? db.manager : (tx as unknown as EntityManager);
}
