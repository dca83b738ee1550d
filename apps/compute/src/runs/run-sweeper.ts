import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { issueWorkspaceScope } from '@strata/db';
import { Clock, PeriodicTask } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { RunDocumentsRepository } from '../run-documents/run-documents.repository.js';
import { RunJobs } from './run-jobs.js';
import { RunsRepository } from './runs.repository.js';

const BATCH = 100;

/** The error a run gets when its worker stopped renewing its lease. */
export const WORKER_LOST = {
  name: 'WorkerLost',
  message:
    'The worker running this function stopped (crashed, killed or cut off) before it finished; the run is not retried automatically.',
};

/**
 * Keeps the job pipeline honest, on every API replica (each step is
 * conditional, so replicas may overlap):
 *  - a running run whose lease expired lost its worker: it is failed, not
 *    retried (a function may have written records or called out before the
 *    crash; running it again is the caller's choice, through a re-run);
 *  - a queued run not taken for a while has its job published again (the
 *    publish after the insert may have failed, or the message been lost);
 *  - documents kept with `api.storeAsJSON` are deleted once they expire.
 * What is past its retention goes in RunRetention.
 */
@Injectable()
export class RunSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('RunSweeper');
  private readonly task: PeriodicTask;

  constructor(
    private readonly runs: RunsRepository,
    private readonly jobs: RunJobs,
    private readonly documents: RunDocumentsRepository,
    private readonly config: ComputeConfig,
    private readonly clock: Clock,
  ) {
    this.task = new PeriodicTask('run sweeper', config.COMPUTE_SWEEP_INTERVAL_MS, () => this.sweep());
  }

  onApplicationBootstrap(): void {
    if (this.config.COMPUTE_SWEEPER_ENABLED) this.task.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  /**
   * Publishes again the jobs of queued runs that have none. A workspace with
   * runs queued longer than COMPUTE_REPUBLISH_AFTER_MS has lost at most as many
   * jobs as it has queued runs beyond the jobs in the two queues (a backlog, or
   * runs waiting in a worker for an isolate, have theirs); that many of its
   * oldest stale runs get a new job. Which run lost its job is not known: a
   * duplicate is dropped by the claim, and the lost one becomes the oldest in
   * time. One id per run and period, so replicas and the sweeps of one period
   * publish a run's job once. Queues that cannot be read count as empty.
   */
  private async republishLost(now: Date): Promise<number> {
    const before = new Date(now.getTime() - this.config.COMPUTE_REPUBLISH_AFTER_MS);
    const stale = await this.runs.workspacesWithStaleRuns(before, BATCH);
    if (stale.length === 0) return 0;
    const jobs = await this.jobs.jobsByWorkspace().catch((err: unknown) => {
      this.logger.warn({ msg: 'job queues not read; stale runs are published again', err: String(err) });
      return new Map<string, number>();
    });
    const period = Math.floor(now.getTime() / this.config.COMPUTE_REPUBLISH_AFTER_MS);
    let republished = 0;
    for (const { workspace_slug: workspace, queued } of stale) {
      const lost = Math.min(queued - (jobs.get(workspace) ?? 0), BATCH - republished);
      if (lost <= 0) continue;
      // The workspace of a run row this sweep read from our own table.
      const scope = issueWorkspaceScope(workspace);
      for (const runId of await this.runs.oldestQueued(scope, before, lost)) {
        const job = { runId, workspaceSlug: scope.workspace };
        if (await this.jobs.publish(scope, job, `${runId}:republished:${period}`)) republished++;
      }
    }
    return republished;
  }

  /** One pass: fail lost runs, re-publish stale jobs. */
  async sweep(): Promise<{ failed: number; republished: number }> {
    const now = this.clock.now();
    let failed = 0;
    for (const lost of await this.runs.expiredLeases(now, BATCH)) {
      // The workspace of a run row this sweep read from our own table.
      const scope = issueWorkspaceScope(lost.workspace_slug);
      if (await this.runs.failLost(scope, lost.id, now, JSON.stringify(WORKER_LOST))) failed++;
    }
    const republished = await this.republishLost(now);
    const expiredDocuments = await this.documents.deleteExpired(now, 1000);
    if (failed || republished || expiredDocuments)
      this.logger.log({ msg: 'run sweep', failed, republished, expiredDocuments });
    return { failed, republished };
  }
}
