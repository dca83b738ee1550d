import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { ConnectionInsideTransactionError, serviceDataSourceOptions, Transactions } from '@strata/db';
import { createTestDatabase, type TestDatabase } from '@strata/testing';

const options = (url: string, more: { poolSize?: number; acquireTimeoutMs?: number } = {}) =>
  serviceDataSourceOptions({ url, schema: 'public', entities: [], migrations: [], poolSize: 2, ...more });

/**
 * libs/db's pool guard, against a real PostgreSQL: a statement that takes
 * another pooled connection inside a transaction, and a pool that stays empty.
 */
describe('the pool guard', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let transactions: Transactions;

  beforeAll(async () => {
    db = await createTestDatabase('strata_pool_guard');
    ds = new DataSource(options(db.url));
    await ds.initialize();
    transactions = new Transactions(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('fails a statement that forgets its transaction (tests run with STRATA_POOL_CHECK=throw)', async () => {
    expect(process.env['STRATA_POOL_CHECK']).toBe('throw');
    await expect(transactions.run(async () => ds.query('SELECT 1'))).rejects.toBeInstanceOf(
      ConnectionInsideTransactionError,
    );
    // A repository that opens its own transaction with TypeORM is checked the same way.
    await expect(ds.transaction(async () => ds.query('SELECT 1'))).rejects.toBeInstanceOf(
      ConnectionInsideTransactionError,
    );
    // A transaction opened inside another is the same mistake.
    await expect(transactions.run(() => transactions.run(async () => 1))).rejects.toBeInstanceOf(
      ConnectionInsideTransactionError,
    );
  });

  it("lets the transaction's own statements through, and the pool's once the transaction has ended", async () => {
    let ended!: () => void;
    const transactionEnded = new Promise<void>((resolve) => (ended = resolve));
    let later: Promise<unknown> | undefined;
    const answer = await transactions.run(async (tx) => {
      const [row] = await (tx as unknown as DataSource['manager']).query<{ n: number }[]>('SELECT 1 AS n');
      // Work the transaction left behind, running once it has ended.
      later = transactionEnded.then(() => ds.query('SELECT 2 AS n'));
      return row!.n;
    });
    ended();
    expect(answer).toBe(1);
    await expect(later).resolves.toEqual([{ n: 2 }]);
    expect(await ds.query('SELECT 3 AS n')).toEqual([{ n: 3 }]);
  });

  it('fails a statement that waits too long for a connection instead of waiting for ever', async () => {
    const small = new DataSource(options(db.url, { poolSize: 1, acquireTimeoutMs: 200 }));
    await small.initialize();
    try {
      const runner = small.createQueryRunner();
      await runner.connect();
      try {
        await expect(small.query('SELECT 1')).rejects.toThrow(/timeout/i);
      } finally {
        await runner.release();
      }
    } finally {
      await small.destroy();
    }
  });
});
