import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { EntityManager } from 'typeorm';

/** A transaction TypeORM's `transaction()` has open, as the code running in it sees it. */
interface OpenTransaction {
  open: boolean;
}

const current = new AsyncLocalStorage<OpenTransaction>();

/**
 * Runs a transaction's work marked as such: while it runs, taking another
 * connection from a pool is a mistake (a statement that forgot its `tx`, or a
 * transaction opened inside another). Each such request holds one connection
 * and waits for a second; ten at once emptied the compute API's pool of ten,
 * and every request after them waited for ever (2026-11-26).
 */
export async function markedAsTransaction<T>(work: () => Promise<T>): Promise<T> {
  const marker: OpenTransaction = { open: true };
  try {
    return await current.run(marker, work);
  } finally {
    // Work it started and left behind (not awaited) may take connections once it has ended.
    marker.open = false;
  }
}

/**
 * What a connection taken inside a transaction does: `throw` (the tests: the
 * statement fails, with the stack of the call that forgot its transaction),
 * `warn` (the default: a process warning, once per call site), or `off`.
 * From `STRATA_POOL_CHECK`.
 */
type PoolCheck = 'throw' | 'warn' | 'off';

function poolCheck(): PoolCheck {
  const value = process.env['STRATA_POOL_CHECK'];
  return value === 'throw' || value === 'off' ? value : 'warn';
}

const warned = new Set<string>();

/** The error (or warning) for a connection taken while a transaction is open in the same flow. */
export class ConnectionInsideTransactionError extends Error {
  constructor() {
    super(
      'A pooled connection was taken while a transaction is open in the same request: pass the transaction (tx) to the repository call',
    );
    this.name = 'ConnectionInsideTransactionError';
  }
}

let installed = false;

/**
 * Checks every `pg.Pool#connect` (TypeORM's queries, `queryPrepared`'s pool
 * queries) against the transaction marker, and marks every transaction opened
 * with TypeORM's `transaction()` (the repositories that open their own, as
 * `Transactions.run` does for services). Installed once per process, by
 * `serviceDataSourceOptions`.
 */
export function installPoolGuard(): void {
  if (installed) return;
  installed = true;
  type Work = (manager: EntityManager) => Promise<unknown>;
  const managerPrototype = EntityManager.prototype as unknown as { transaction: (...args: unknown[]) => unknown };
  const transaction = managerPrototype.transaction;
  managerPrototype.transaction = function (this: unknown, ...args: unknown[]) {
    const at = args.findIndex((a) => typeof a === 'function');
    if (at >= 0) {
      const work = args[at] as Work;
      args[at] = (manager: EntityManager) => markedAsTransaction(() => work(manager));
    }
    return transaction.apply(this, args);
  };
  const prototype = pg.Pool.prototype as unknown as { connect: (...args: unknown[]) => unknown };
  const connect = prototype.connect;
  prototype.connect = function (this: unknown, ...args: unknown[]) {
    if (current.getStore()?.open) {
      const check = poolCheck();
      const error = new ConnectionInsideTransactionError();
      if (check === 'throw') {
        const callback = args.find((a): a is (err: Error) => void => typeof a === 'function');
        if (callback) {
          callback(error);
          return undefined;
        }
        return Promise.reject(error);
      }
      if (check === 'warn') {
        const site = error.stack?.split('\n').slice(2, 8).join('\n') ?? '';
        if (!warned.has(site)) {
          warned.add(site);
          process.emitWarning(error.message, { code: 'STRATA_POOL_INSIDE_TRANSACTION', detail: site });
        }
      }
    }
    return connect.apply(this, args);
  };
}
