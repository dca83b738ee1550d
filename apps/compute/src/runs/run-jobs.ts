import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { computeJobsStream, computeJobSubject, type ComputeJob } from '@strata/contracts';
import { ensureStream, publishAll, publishJson } from '@strata/events';
import { NatsConnectionHolder, ServiceConfig } from '@strata/platform';

/**
 * Publishes compute jobs on the JetStream work queue. The run row is written
 * first and is the truth; the job only says "run this id". `Nats-Msg-Id` is the
 * run id, so publishing a job twice (a retry, the sweeper) is dropped by the
 * stream inside its window, and a worker's claim ignores it after that.
 */
@Injectable()
export class RunJobs implements OnApplicationBootstrap {
  private readonly logger = new Logger('RunJobs');
  private ready: Promise<void> | undefined;

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly config: ServiceConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.ensureStream();
  }

  /**
   * Publishes the job of a queued run; false (logged) when NATS did not take it: the sweeper will.
   * `msgId` is the run id for the first publish; the sweeper's re-publishes give another, since
   * the stream would drop a repeated id inside its duplicate window.
   */
  async publish(job: ComputeJob, msgId: string = job.runId): Promise<boolean> {
    try {
      await this.ensureStream();
      await publishJson(
        await this.nats.get(),
        computeJobSubject(this.config.NATS_PREFIX, job.workspaceSlug),
        job,
        msgId,
      );
      return true;
    } catch (err) {
      this.logger.warn({
        msg: 'compute job not published; the sweeper publishes it again',
        runId: job.runId,
        err: String(err),
      });
      return false;
    }
  }

  /** `publish` for many jobs in one write (each still acknowledged on its own); false for all when NATS did not take them. */
  async publishMany(jobs: readonly ComputeJob[]): Promise<boolean[]> {
    if (jobs.length === 0) return [];
    try {
      await this.ensureStream();
      await publishAll(
        await this.nats.get(),
        jobs.map((job) => ({
          subject: computeJobSubject(this.config.NATS_PREFIX, job.workspaceSlug),
          payload: JSON.stringify(job),
          msgId: job.runId,
        })),
      );
      return jobs.map(() => true);
    } catch (err) {
      this.logger.warn({
        msg: 'compute jobs not published; the sweeper publishes them again',
        runIds: jobs.map((j) => j.runId),
        err: String(err),
      });
      return jobs.map(() => false);
    }
  }

  private ensureStream(): Promise<void> {
    this.ready ??= (async () =>
      ensureStream(await this.nats.get(), computeJobsStream(this.config.NATS_PREFIX)))().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }
}
