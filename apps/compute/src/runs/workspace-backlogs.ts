import { Injectable } from '@nestjs/common';
import type { ComputeJobLane } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { Clock } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { RunsRepository } from './runs.repository.js';

/** How long one count of a workspace's recent runs stands for its next jobs. */
export const BACKLOG_COUNT_MS = 250;

interface Count {
  /** Recent runs the last count found (at most `limit + 1`). */
  readonly queued: number;
  readonly at: number;
  /** Jobs placed since that count. */
  since: number;
}

/**
 * Which work queue a workspace's next job joins: `backlog` when the workspace
 * queued more than `limit` runs in the recent window (`count` says how many),
 * its new ones included, `jobs` otherwise. It is the workspace's own demand that
 * counts, not how long its runs wait: a workspace whose runs are delayed by
 * others' backlogs does not become heavy for it (a count of the runs still
 * queued did, and then put it behind all of them).
 *
 * A count stands for `BACKLOG_COUNT_MS`: an ask that waited for a count (it
 * started it, or joined one under way) is taken to be in it (its runs were
 * written before), and an ask made on a standing count adds its jobs to it. So
 * a burst of runs costs a count or two a second, not one per run. Counts read
 * at most `limit + 1` index entries.
 *
 * Pure but for `count`, and the clock given: the decision is unit-tested.
 */
export class BacklogEstimates<S extends { readonly workspace: string }> {
  private readonly counts = new Map<string, Count>();
  private readonly pending = new Map<string, Promise<Count>>();

  constructor(
    private readonly limit: number,
    private readonly count: (scope: S, upTo: number) => Promise<number>,
    private readonly now: () => number,
  ) {}

  /** The lane of `jobs` more jobs of the workspace (their runs are written already). */
  async laneOf(scope: S, jobs = 1): Promise<ComputeJobLane> {
    const known = this.counts.get(scope.workspace);
    let queued: number;
    if (known && this.now() - known.at < BACKLOG_COUNT_MS) {
      known.since += jobs;
      queued = known.queued + known.since;
    } else {
      queued = (await this.fresh(scope)).queued;
    }
    return queued > this.limit ? 'backlog' : 'jobs';
  }

  private fresh(scope: S): Promise<Count> {
    const workspace = scope.workspace;
    let pending = this.pending.get(workspace);
    if (!pending) {
      pending = this.count(scope, this.limit + 1)
        .then((queued): Count => {
          const fresh: Count = { queued, at: this.now(), since: 0 };
          this.counts.set(workspace, fresh);
          return fresh;
        })
        .finally(() => this.pending.delete(workspace));
      this.pending.set(workspace, pending);
      if (this.counts.size > 10_000) this.forgetOld();
    }
    return pending;
  }

  private forgetOld(): void {
    const now = this.now();
    for (const [workspace, count] of this.counts) if (now - count.at >= BACKLOG_COUNT_MS) this.counts.delete(workspace);
  }
}

/** `BacklogEstimates` over the runs table, for the service (API replicas and workers alike). */
@Injectable()
export class WorkspaceBacklogs {
  private readonly estimates: BacklogEstimates<WorkspaceScope>;

  constructor(runs: RunsRepository, config: ComputeConfig, clock: Clock) {
    this.estimates = new BacklogEstimates(
      config.COMPUTE_BACKLOG_AFTER,
      (scope, upTo) =>
        runs.queuedSince(scope, new Date(clock.now().getTime() - config.COMPUTE_BACKLOG_WINDOW_MS), upTo),
      () => clock.now().getTime(),
    );
  }

  /**
   * The lane of `jobs` more jobs of the workspace (their runs are written already); `jobs` when
   * the count fails (a job is never lost for want of a lane: the count decides only an order).
   */
  laneOf(scope: WorkspaceScope, jobs?: number): Promise<ComputeJobLane> {
    return this.estimates.laneOf(scope, jobs).catch((): ComputeJobLane => 'jobs');
  }
}
