import { describe, expect, it } from '@jest/globals';
import { runRetentionPass, type RetentionRule } from './retention-sweep.js';

/** A rule over `rows` rows past their window that records the limit of each batch. */
function rows(table: string, count: number, batchSize?: number): RetentionRule & { limits: number[] } {
  let left = count;
  const limits: number[] = [];
  return {
    table,
    ...(batchSize !== undefined ? { batchSize } : {}),
    limits,
    deleteBatch: (limit) => {
      limits.push(limit);
      const n = Math.min(left, limit);
      left -= n;
      return Promise.resolve(n);
    },
  };
}

describe('runRetentionPass', () => {
  it('deletes batch after batch until one comes back short, table by table', async () => {
    const a = rows('a', 2_500);
    const b = rows('b', 250, 100);
    const seen: [string, number][] = [];
    const pass = await runRetentionPass([a, b], { onDeleted: (table, n) => seen.push([table, n]) });
    expect(pass.deleted).toEqual({ a: 2_500, b: 250 });
    expect(pass.unfinished).toEqual([]);
    expect(a.limits).toEqual([1000, 1000, 1000]);
    expect(b.limits).toEqual([100, 100, 100]);
    expect(seen).toEqual([
      ['a', 1000],
      ['a', 1000],
      ['a', 500],
      ['b', 100],
      ['b', 100],
      ['b', 50],
    ]);
  });

  it('asks once more after a full batch that was the last, and counts nothing for it', async () => {
    const a = rows('a', 2_000);
    const pass = await runRetentionPass([a]);
    expect(pass.deleted).toEqual({ a: 2_000 });
    expect(a.limits).toHaveLength(3);
  });

  it('stops a table at the cap of batches and says it is unfinished', async () => {
    const a = rows('a', 10_000, 10);
    const pass = await runRetentionPass([a, rows('b', 5)], { batchesPerPass: 3 });
    expect(pass.deleted).toEqual({ a: 30, b: 5 });
    expect(pass.unfinished).toEqual(['a']);
  });

  it('goes on after a batch that kept some of what it read while the rule says there is more', async () => {
    const answers = [
      { deleted: 2, more: true },
      { deleted: 0, more: true },
      { deleted: 5, more: false },
    ];
    const cursor: RetentionRule = { table: 'cursor', deleteBatch: () => Promise.resolve(answers.shift()!) };
    const pass = await runRetentionPass([cursor]);
    expect(pass.deleted).toEqual({ cursor: 7 });
    expect(answers).toEqual([]);
  });

  it('runs the other rules when one fails, and reports the failure with what it deleted before', async () => {
    let calls = 0;
    const failing: RetentionRule = {
      table: 'failing',
      batchSize: 10,
      deleteBatch: () => (++calls === 1 ? Promise.resolve(10) : Promise.reject(new Error('deadlock detected'))),
    };
    const pass = await runRetentionPass([failing, rows('b', 3)]);
    expect(pass.deleted).toEqual({ failing: 10, b: 3 });
    expect(pass.failures.map((f) => [f.table, String(f.error)])).toEqual([['failing', 'Error: deadlock detected']]);
  });
});
