import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { issueWorkspaceScope } from '@strata/db';
import { Clock, PeriodicTask } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { EventRunsRepository } from '../events/event-runs.repository.js';
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
 */
@Injectable()
export class RunSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('RunSweeper');
  private readonly task: PeriodicTask;

  constructor(
    private readonly runs: RunsRepository,
    private readonly jobs: RunJobs,
    private readonly documents: RunDocumentsRepository,
    private readonly eventRuns: EventRunsRepository,
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

  /** One pass: fail lost runs, re-publish stale jobs. */
  async sweep(): Promise<{ failed: number; republished: number }> {
    const now = this.clock.now();
    let failed = 0;
    for (const lost of await this.runs.expiredLeases(now, BATCH)) {
      // The workspace of a run row this sweep read from our own table.
      const scope = issueWorkspaceScope(lost.workspace_slug);
      if (await this.runs.failLost(scope, lost.id, now, JSON.stringify(WORKER_LOST))) failed++;
    }
    let republished = 0;
    const before = new Date(now.getTime() - this.config.COMPUTE_REPUBLISH_AFTER_MS);
    // A run of a workspace whose jobs still wait in the queues (a backlog) is waiting, not lost: its
    // job is published again only once they are gone, or after ten times as long in any case.
    const waiting = await this.jobs.workspacesWithJobs().catch((err: unknown) => {
      this.logger.warn({ msg: 'job queues not read; stale runs are published again', err: String(err) });
      return new Set<string>();
    });
    const overdue = new Date(now.getTime() - 10 * this.config.COMPUTE_REPUBLISH_AFTER_MS);
    for (const stale of await this.runs.staleQueued(before, BATCH, { waiting: [...waiting], overdue })) {
      // The workspace of a run row this sweep read from our own table.
      const scope = issueWorkspaceScope(stale.workspace_slug);
      const job = { runId: stale.id, workspaceSlug: scope.workspace };
      // One id per run and period: replicas sweeping at once, and the sweeps of one period, publish it once.
      const period = Math.floor(now.getTime() / this.config.COMPUTE_REPUBLISH_AFTER_MS);
      if (await this.jobs.publish(scope, job, `${stale.id}:republished:${period}`)) republished++;
    }
    const expiredDocuments = await this.documents.deleteExpired(now, 1000);
    // The record stream keeps events 7 days: older (event, trigger) pairs cannot come back.
    await this.eventRuns.forgetBefore(new Date(now.getTime() - 8 * 24 * 3_600_000), 1000);
    if (failed || republished || expiredDocuments)
      this.logger.log({ msg: 'run sweep', failed, republished, expiredDocuments });
    return { failed, republished };
  }
}
