import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { createTestDatabase, type TestDatabase } from '@strata/testing';
import { queryPrepared } from '@strata/db';

interface Row {
  id: number;
  label: string;
}

describe('queryPrepared (libs/db) against a real PostgreSQL', () => {
  let db: TestDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase('strata_db_test');
    // One connection: the session whose prepared statements the first test reads is the one that ran them.
    ds = new DataSource({ type: 'postgres', url: db.url, extra: { max: 1 } });
    await ds.initialize();
    await ds.query('CREATE TABLE things (id int PRIMARY KEY, label text NOT NULL, meta jsonb)');
  });

  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  /** The statements prepared in the (only) pooled connection's session. */
  const preparedTexts = async (): Promise<string[]> =>
    (await ds.query<{ statement: string }[]>('SELECT statement FROM pg_prepared_statements')).map((r) => r.statement);

  it('answers the rows of INSERT, UPDATE and DELETE alike, and prepares the statement once', async () => {
    const insert = 'INSERT INTO things (id, label, meta) VALUES ($1, $2, $3) RETURNING id, label';
    expect(await queryPrepared<Row>(ds.manager, insert, [1, 'one', { tags: ['a'] }])).toEqual([
      { id: 1, label: 'one' },
    ]);
    expect(await queryPrepared<Row>(ds.manager, insert, [2, 'two', null])).toEqual([{ id: 2, label: 'two' }]);
    const update = `UPDATE things SET label = label || '!' WHERE id <= $1 RETURNING id, label`;
    const updated = await queryPrepared<Row>(ds.manager, update, [2]);
    expect(updated.sort((a, b) => a.id - b.id)).toEqual([
      { id: 1, label: 'one!' },
      { id: 2, label: 'two!' },
    ]);
    expect(await queryPrepared<Row>(ds.manager, 'DELETE FROM things WHERE id = $1 RETURNING id, label', [2])).toEqual([
      { id: 2, label: 'two!' },
    ]);
    // Objects are bound as JSON, as manager.query binds them.
    expect(await ds.query(`SELECT meta FROM things WHERE id = 1`)).toEqual([{ meta: { tags: ['a'] } }]);
    // The same text is one named statement per connection, parsed there once.
    const texts = await preparedTexts();
    expect(texts.filter((t) => t === insert)).toEqual([insert]);
    expect(texts).toContain(update);
  });

  it("runs on the manager's transaction, so a rollback takes its writes back", async () => {
    const insert = 'INSERT INTO things (id, label) VALUES ($1, $2) RETURNING id, label';
    await expect(
      ds.transaction(async (tx) => {
        await queryPrepared<Row>(tx, insert, [10, 'ten']);
        const seen = await tx.query<Row[]>('SELECT id, label FROM things WHERE id = 10');
        expect(seen).toEqual([{ id: 10, label: 'ten' }]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await ds.query('SELECT id FROM things WHERE id = 10')).toEqual([]);
  });

  it('raises the database error with its code, as unique-violation checks expect', async () => {
    const insert = 'INSERT INTO things (id, label) VALUES ($1, $2) RETURNING id, label';
    await queryPrepared<Row>(ds.manager, insert, [20, 'x']);
    await expect(queryPrepared<Row>(ds.manager, insert, [20, 'y'])).rejects.toMatchObject({
      code: '23505',
      constraint: 'things_pkey',
    });
  });
});
