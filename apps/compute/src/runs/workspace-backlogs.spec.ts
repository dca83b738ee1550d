import { describe, expect, it } from '@jest/globals';
import { BACKLOG_COUNT_MS, BacklogEstimates } from './workspace-backlogs.js';

const ws = (workspace: string) => ({ workspace });

function estimates(limit: number, queued: Record<string, number>) {
  let now = 1_000_000;
  const counts: string[] = [];
  const backlog = new BacklogEstimates(
    limit,
    async (scope: { workspace: string }, upTo: number) => {
      counts.push(scope.workspace);
      return Math.min(queued[scope.workspace] ?? 0, upTo);
    },
    () => now,
  );
  return { backlog, counts, advance: (ms: number) => (now += ms) };
}

describe('BacklogEstimates', () => {
  it('puts the jobs of a workspace with more than the limit queued on the backlog', async () => {
    const { backlog } = estimates(3, { light: 3, heavy: 4 });
    expect(await backlog.laneOf(ws('light'))).toBe('jobs');
    expect(await backlog.laneOf(ws('heavy'))).toBe('backlog');
  });

  it('counts once per interval, adding the jobs placed since the count', async () => {
    const { backlog, counts, advance } = estimates(3, { a: 2 });
    // The count (2, this run included) stands; each job placed after it adds one.
    expect(await backlog.laneOf(ws('a'))).toBe('jobs');
    expect(await backlog.laneOf(ws('a'))).toBe('jobs');
    expect(await backlog.laneOf(ws('a'))).toBe('backlog');
    expect(counts).toEqual(['a']);
    advance(BACKLOG_COUNT_MS);
    // A new count: the runs were taken meanwhile.
    expect(await backlog.laneOf(ws('a'))).toBe('jobs');
    expect(counts).toEqual(['a', 'a']);
  });

  it('places a batch by the count before it, and the batch counts for the next', async () => {
    const { backlog } = estimates(10, { a: 8 });
    expect(await backlog.laneOf(ws('a'), 8)).toBe('jobs');
    expect(await backlog.laneOf(ws('a'))).toBe('backlog');
  });

  it('shares one count among the asks made while it is under way', async () => {
    const { backlog, counts } = estimates(3, { a: 1, b: 9 });
    const lanes = await Promise.all([backlog.laneOf(ws('a')), backlog.laneOf(ws('a')), backlog.laneOf(ws('b'))]);
    expect(lanes).toEqual(['jobs', 'jobs', 'backlog']);
    expect(counts.sort()).toEqual(['a', 'b']);
  });

  it('asks the count for one more row than the limit, never a whole backlog', async () => {
    const asked: number[] = [];
    const backlog = new BacklogEstimates(
      5,
      async (_scope: { workspace: string }, upTo: number) => {
        asked.push(upTo);
        return upTo;
      },
      () => 0,
    );
    expect(await backlog.laneOf(ws('a'))).toBe('backlog');
    expect(asked).toEqual([6]);
  });
});
