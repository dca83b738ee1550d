import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { computeJobsStream, computeJobSubject, type ComputeJob, type ComputeJobLane } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { jetstreamManager } from '@nats-io/jetstream';
import { ensureStream, publishAll, publishJson } from '@strata/events';
import { NatsConnectionHolder, ServiceConfig } from '@strata/platform';
import { WorkspaceBacklogs } from './workspace-backlogs.js';

const LANES: readonly ComputeJobLane[] = ['jobs', 'backlog'];

/**
 * Publishes compute jobs on the JetStream work queues: `jobs`, or `backlog`
 * for a workspace with many runs queued already (`WorkspaceBacklogs`). The run
 * row is written first and is the truth; the job only says "run this id" (and
 * carries the row when it fits). `Nats-Msg-Id` is the run id, so publishing a
 * job twice (a retry) is dropped by the stream inside its window, and a
 * worker's claim ignores it after that.
 */
@Injectable()
export class RunJobs implements OnApplicationBootstrap {
  private readonly logger = new Logger('RunJobs');
  private ready: Promise<void> | undefined;

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly config: ServiceConfig,
    private readonly backlogs: WorkspaceBacklogs,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.ensureStreams();
  }

  /**
   * Publishes the job of a queued run of `scope`; false (logged) when NATS did not take it: the sweeper will.
   * `msgId` is the run id for the first publish; the sweeper's re-publishes give another, since
   * the stream would drop a repeated id inside its duplicate window.
   */
  async publish(scope: WorkspaceScope, job: ComputeJob, msgId: string = job.runId): Promise<boolean> {
    try {
      await this.ensureStreams();
      const lane = await this.backlogs.laneOf(scope);
      await publishJson(await this.nats.get(), this.subjectOf(scope, lane), job, msgId);
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
  async publishMany(jobs: readonly { readonly scope: WorkspaceScope; readonly job: ComputeJob }[]): Promise<boolean[]> {
    if (jobs.length === 0) return [];
    try {
      await this.ensureStreams();
      const lanes = await this.lanesOf(jobs.map(({ scope }) => scope));
      await publishAll(
        await this.nats.get(),
        jobs.map(({ scope, job }, i) => ({
          subject: this.subjectOf(scope, lanes[i]!),
          payload: JSON.stringify(job),
          msgId: job.runId,
        })),
      );
      return jobs.map(() => true);
    } catch (err) {
      this.logger.warn({
        msg: 'compute jobs not published; the sweeper publishes them again',
        runIds: jobs.map(({ job }) => job.runId),
        err: String(err),
      });
      return jobs.map(() => false);
    }
  }

  /**
   * How many jobs each workspace has in the two queues: waiting for a worker, or
   * held by one and not acknowledged yet (a run waiting for an isolate, or
   * executing before its claim). A workspace with as many jobs as queued runs
   * has lost none (the sweep).
   */
  async jobsByWorkspace(): Promise<Map<string, number>> {
    await this.ensureStreams();
    const jsm = await jetstreamManager(await this.nats.get());
    const jobs = new Map<string, number>();
    for (const lane of LANES) {
      const prefix = `${this.config.NATS_PREFIX}.compute.${lane}.`;
      const info = await jsm.streams.info(computeJobsStream(this.config.NATS_PREFIX, lane).name, {
        subjects_filter: `${prefix}>`,
      });
      for (const [subject, count] of Object.entries(info.state.subjects ?? {})) {
        const workspace = subject.slice(prefix.length);
        jobs.set(workspace, (jobs.get(workspace) ?? 0) + count);
      }
    }
    return jobs;
  }

  /** The lane of each job, asked once per workspace for all of its jobs in the batch. */
  private async lanesOf(scopes: readonly WorkspaceScope[]): Promise<ComputeJobLane[]> {
    const byWorkspace = new Map<string, { scope: WorkspaceScope; jobs: number }>();
    for (const scope of scopes) {
      const entry = byWorkspace.get(scope.workspace);
      if (entry) entry.jobs++;
      else byWorkspace.set(scope.workspace, { scope, jobs: 1 });
    }
    const lanes = new Map<string, ComputeJobLane>();
    await Promise.all(
      [...byWorkspace].map(async ([workspace, { scope, jobs }]) => {
        lanes.set(workspace, await this.backlogs.laneOf(scope, jobs));
      }),
    );
    return scopes.map((scope) => lanes.get(scope.workspace)!);
  }

  private subjectOf(scope: WorkspaceScope, lane: ComputeJobLane): string {
    return computeJobSubject(this.config.NATS_PREFIX, scope.workspace, lane);
  }

  private ensureStreams(): Promise<void> {
    this.ready ??= (async () => {
      const nc = await this.nats.get();
      for (const lane of LANES) await ensureStream(nc, computeJobsStream(this.config.NATS_PREFIX, lane));
    })().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }
}
