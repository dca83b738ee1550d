import { describe, expect, it } from '@jest/globals';
import { issueWorkspaceScope } from '@strata/db';
import { ManualClock } from '@strata/testing';
import type { ComputeConfig } from '../compute.config.js';
import type { RunsRepository } from './runs.repository.js';
import { BACKLOG_COUNT_MS, BacklogEstimates, WorkspaceBacklogs } from './workspace-backlogs.js';

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
    expect(await backlog.laneOf(ws('a'))).toBe('jobs'); // 3
    expect(await backlog.laneOf(ws('a'))).toBe('backlog'); // 4
    expect(counts).toEqual(['a']);
    advance(BACKLOG_COUNT_MS);
    // A new count: the runs were taken meanwhile.
    expect(await backlog.laneOf(ws('a'))).toBe('jobs');
    expect(counts).toEqual(['a', 'a']);
  });

  it('adds a batch placed on a standing count at once', async () => {
    const { backlog } = estimates(10, { a: 8 });
    expect(await backlog.laneOf(ws('a'), 8)).toBe('jobs'); // its 8 runs are the count's 8
    expect(await backlog.laneOf(ws('a'), 2)).toBe('jobs'); // 10
    expect(await backlog.laneOf(ws('a'), 2)).toBe('backlog'); // 12
  });

  it('shares one count among the asks made while it is under way, each taken to be in it', async () => {
    const { backlog, counts } = estimates(3, { a: 3, b: 9 });
    // Three runs written at once, one count: 3 queued, not 3 plus the two that joined it.
    const lanes = await Promise.all([
      backlog.laneOf(ws('a')),
      backlog.laneOf(ws('a')),
      backlog.laneOf(ws('a')),
      backlog.laneOf(ws('b')),
    ]);
    expect(lanes).toEqual(['jobs', 'jobs', 'jobs', 'backlog']);
    expect(counts.sort()).toEqual(['a', 'b']);
    expect(await backlog.laneOf(ws('a'))).toBe('backlog'); // a fourth, on the standing count
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

  it('places a job on the work queue when the count fails: a job is never lost for want of a lane', async () => {
    const runs = { queuedSince: () => Promise.reject(new Error('connection lost')) } as unknown as RunsRepository;
    const backlogs = new WorkspaceBacklogs(
      runs,
      { COMPUTE_BACKLOG_AFTER: 1, COMPUTE_BACKLOG_WINDOW_MS: 10_000 } as ComputeConfig,
      new ManualClock(0),
    );
    await expect(backlogs.laneOf(issueWorkspaceScope('acme'))).resolves.toBe('jobs');
  });
});
