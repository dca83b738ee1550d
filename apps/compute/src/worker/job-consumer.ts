import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { ANY_UUID, computeJobsStream, isWorkspaceSlug, type ComputeJob, type ComputeJobLane } from '@strata/contracts';
import { issueWorkspaceScope } from '@strata/db';
import { ensureStream, extractTraceContext } from '@strata/events';
import { NatsConnectionHolder } from '@strata/platform';
import { context } from '@opentelemetry/api';
import { ComputeConfig } from '../compute.config.js';
import { parseCarriedRun } from '../runs/carried-run.js';
import { RunExecutor } from './run-executor.js';

const NANOS_PER_MS = 1_000_000;

/**
 * Narrows a job message; anything else is terminated. A run id that is not a
 * UUID is refused here: PostgreSQL would refuse the claim's statement, and the
 * job would be redelivered without end.
 */
export function parseComputeJob(payload: unknown): ComputeJob {
  const p = payload as Record<string, unknown> | null;
  if (
    typeof p !== 'object' ||
    p === null ||
    typeof p['runId'] !== 'string' ||
    !ANY_UUID.test(p['runId']) ||
    typeof p['workspaceSlug'] !== 'string' ||
    !isWorkspaceSlug(p['workspaceSlug'])
  ) {
    throw new Error('not a compute job');
  }
  // A carried run that does not parse is ignored: the worker claims the run from its row instead.
  const run = parseCarriedRun(p['run']);
  return { runId: p['runId'], workspaceSlug: p['workspaceSlug'], ...(run ? { run } : {}) };
}

/**
 * Takes jobs from the two work queues, from each up to twice as many at once
 * as the worker has isolates. A job is acknowledged once its run is claimed
 * (or found taken): from then on the run row and its lease are the truth, not
 * the message, so a long run never outlives an ack deadline and a lost worker
 * is found by its lease. A job of the `backlog` queue waits for an isolate
 * behind every job of the other (docs/compute.md, "Fair share"): another
 * workspace's run taken after it still starts at the next free isolate.
 */
@Injectable()
export class JobConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('JobConsumer');
  /** JetStream's manager for the metrics' reads of the queues, made at the first. */
  private manager: Promise<JetStreamManager> | undefined;
  private readonly lanes: {
    lane: ComputeJobLane;
    stream: string;
    durable: string;
    messages: ConsumerMessages;
    loop: Promise<void>;
    inFlight: Set<Promise<void>>;
  }[] = [];

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly executor: RunExecutor,
    private readonly config: ComputeConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const lane of ['jobs', 'backlog'] as const) this.lanes.push(await this.consume(lane));
    this.logger.log({ msg: 'taking jobs', lanes: ['jobs', 'backlog'], isolates: this.config.COMPUTE_WORKER_ISOLATES });
  }

  private async consume(lane: ComputeJobLane) {
    const nc = await this.nats.get();
    const stream = computeJobsStream(this.config.NATS_PREFIX, lane);
    await ensureStream(nc, stream);
    const durable = `${this.config.NATS_PREFIX}_compute_${lane === 'jobs' ? 'workers' : 'backlog_workers'}`;
    const jsm = await jetstreamManager(nc);
    await jsm.consumers.add(stream.name, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      // Only the claim happens before the ack: a short deadline hands a stuck job to another worker soon.
      ack_wait: 10_000 * NANOS_PER_MS,
      max_deliver: -1,
    });
    const consumer = await jetstream(nc).consumers.get(stream.name, durable);
    // Twice as many jobs in hand as isolates: a job's claim and its outcome's write (database
    // round trips) overlap with other runs' execution instead of leaving an isolate idle. The
    // engine queues a run until an isolate is free.
    const limit = this.config.COMPUTE_WORKER_ISOLATES * 2;
    // The client asks for more once it holds a quarter of that: by default (three quarters) it sent a
    // pull request per job taken, a write on each side for every run (NATS CPU per run 0.16 → 0.12 ms
    // in bench/compute's drain). A pull is sent only once the jobs before it were taken from the
    // iterator, so a worker never holds more than `limit` jobs another worker could have run.
    const messages = await consumer.consume({
      max_messages: limit,
      threshold_messages: Math.max(1, Math.floor(limit / 4)),
    });
    const inFlight = new Set<Promise<void>>();
    const background = lane === 'backlog';
    const loop = (async () => {
      for await (const msg of messages) {
        const handled = this.handle(msg, background)
          .catch((err: unknown) => this.logger.error({ msg: 'job not handled', err: String(err) }))
          .finally(() => inFlight.delete(handled));
        inFlight.add(handled);
        if (inFlight.size >= limit) await Promise.race(inFlight);
      }
    })();
    return { lane, stream: stream.name, durable, messages, loop, inFlight };
  }

  /** Jobs of each lane that no worker holds yet (its consumer's `num_pending`), for the metrics. */
  async pendingJobs(): Promise<{ lane: ComputeJobLane; pending: number }[]> {
    this.manager ??= this.nats.get().then((nc) => jetstreamManager(nc));
    const jsm = await this.manager.catch((err: unknown) => {
      this.manager = undefined; // asked again at the next collection
      throw err;
    });
    return Promise.all(
      this.lanes.map(async ({ lane, stream, durable }) => ({
        lane,
        pending: (await jsm.consumers.info(stream, durable)).num_pending,
      })),
    );
  }

  /**
   * Takes no more jobs, before the engine closes (the sandbox engine provider):
   * what it holds unstarted goes back. Not awaited: the iterator ends only once
   * this loop takes its next message, which may wait for a job the engine's
   * closing ends.
   */
  beforeApplicationShutdown(): void {
    for (const { messages } of this.lanes) {
      messages.close().catch((err: unknown) => this.logger.warn({ msg: 'job consumer not closed', err: String(err) }));
    }
  }

  async onApplicationShutdown(): Promise<void> {
    for (const { messages } of this.lanes) await messages.close();
    for (const { loop, inFlight } of this.lanes) {
      await loop;
      await Promise.all(inFlight);
    }
  }

  /** Executes a job's run; `background` (the backlog queue): behind every other job for an isolate. */
  private async handle(msg: JsMsg, background: boolean): Promise<void> {
    let job: ComputeJob;
    try {
      job = parseComputeJob(msg.json());
    } catch {
      msg.term();
      return;
    }
    await context.with(extractTraceContext(msg.headers), async () => {
      // The workspace of a job taken from our own work queue, published by the compute API for a
      // run it inserted in that workspace: the run is claimed and executed within it.
      const scope = issueWorkspaceScope(job.workspaceSlug);
      // A job delivered again may be one whose run executed here before: claimed first, like a job without its run.
      if (job.run && this.config.COMPUTE_CLAIM_AFTER_MS > 0 && !msg.info.redelivered) {
        await this.executor.executeQueued(scope, job.runId, job.run, msg, { background });
        return;
      }
      await this.executor.executeClaimedAtStart(scope, job.runId, msg, { background });
    });
  }
}
