import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { serviceDataSourceOptions } from '../src/data-source.js';
import { Transactions, afterCommit, managerOf, type Tx } from '../src/transactions.js';

// A schema of this run's own, in the test server's `postgres` database, which every server has
// (libs/testing, whose test databases the other suites use, depends on this library).
const schema = `strata_db_test_${randomBytes(4).toString('hex')}`;
const server = new URL(
  process.env['TEST_DATABASE_URL'] ?? process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/strata',
);
server.pathname = '/postgres';
const url = server.toString();
let ds: DataSource;
let transactions: Transactions;

beforeAll(async () => {
  ds = new DataSource(serviceDataSourceOptions({ url, schema, entities: [], migrations: [], poolSize: 2 }));
  await ds.initialize();
  await ds.query(`CREATE SCHEMA ${schema}`);
  await ds.query(`CREATE TABLE ${schema}.items (name text PRIMARY KEY)`);
  transactions = new Transactions(ds);
});

afterAll(async () => {
  await ds?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await ds?.destroy();
});

const insert = (tx: Tx, name: string) =>
  managerOf(ds, tx).query(`INSERT INTO ${schema}.items (name) VALUES ($1)`, [name]);
/** Read on another pooled connection: what a hook sees is what other sessions see. */
const stored = async (name: string) =>
  (await ds.query<unknown[]>(`SELECT 1 FROM ${schema}.items WHERE name = $1`, [name])).length === 1;

describe('afterCommit', () => {
  it('runs hooks in order once the transaction committed, when its changes are visible to others', async () => {
    const ran: string[] = [];
    let visible: Promise<boolean> | undefined;
    const result = await transactions.run(async (tx) => {
      await insert(tx, 'a');
      afterCommit(tx, () => {
        ran.push('first');
        visible = stored('a'); // asked from the hook, on another connection
      });
      afterCommit(tx, () => ran.push('second'));
      expect(ran).toEqual([]);
      return 'done';
    });
    expect(result).toBe('done');
    expect(ran).toEqual(['first', 'second']);
    expect(await visible).toBe(true);
  });

  it('never runs the hooks of a transaction that rolled back', async () => {
    let ran = false;
    await expect(
      transactions.run(async (tx) => {
        await insert(tx, 'b');
        afterCommit(tx, () => (ran = true));
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(ran).toBe(false);
    expect(await stored('b')).toBe(false);
  });

  it('drops what a savepoint that rolled back registered, and keeps what a released one did', async () => {
    const ran: string[] = [];
    await transactions.run(async (tx) => {
      await transactions.savepoint(tx, async () => {
        await insert(tx, 'kept');
        afterCommit(tx, () => ran.push('kept'));
      });
      await expect(
        transactions.savepoint(tx, async () => {
          await insert(tx, 'undone');
          afterCommit(tx, () => ran.push('undone'));
          throw new Error('item refused');
        }),
      ).rejects.toThrow('item refused');
      afterCommit(tx, () => ran.push('after'));
    });
    expect(ran).toEqual(['kept', 'after']);
    expect([await stored('kept'), await stored('undone')]).toEqual([true, false]);
  });

  it('goes on after a hook that throws, and the caller still gets its result', async () => {
    const ran: string[] = [];
    const result = await transactions.run(async (tx) => {
      afterCommit(tx, () => {
        throw new Error('hook failed');
      });
      afterCommit(tx, () => ran.push('next'));
      return 42;
    });
    expect(result).toBe(42);
    expect(ran).toEqual(['next']);
  });

  it('fails a transaction a caught statement error aborted, rather than run its hooks', async () => {
    let ran = false;
    const outcome = transactions.run(async (tx) => {
      await insert(tx, 'c');
      afterCommit(tx, () => (ran = true));
      // Caught, outside a savepoint: PostgreSQL has aborted the transaction, and would answer COMMIT with a rollback.
      await managerOf(ds, tx)
        .query('SELECT 1 / 0')
        .catch(() => undefined);
      return 'looks fine';
    });
    await expect(outcome).rejects.toThrow(/current transaction is aborted/);
    expect(ran).toBe(false);
    expect(await stored('c')).toBe(false);
  });

  it('refuses a handle that is not an open transaction of Transactions.run, or one that has ended', async () => {
    expect(() => afterCommit(ds.manager as unknown as Tx, () => undefined)).toThrow(/not an open transaction/);
    let ended: Tx | undefined;
    await transactions.run((tx) => {
      ended = tx;
      return Promise.resolve();
    });
    expect(() => afterCommit(ended!, () => undefined)).toThrow(/not an open transaction/);
  });
});
