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
  type JsMsg,
} from '@nats-io/jetstream';
import { ANY_UUID, computeJobsStream, isWorkspaceSlug, type ComputeJob } from '@strata/contracts';
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
 * Takes jobs from the work queue, as many at once as the worker has isolates.
 * A job is acknowledged once its run is claimed (or found taken): from then
 * on the run row and its lease are the truth, not the message, so a long run
 * never outlives an ack deadline and a lost worker is found by its lease.
 */
@Injectable()
export class JobConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('JobConsumer');
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly executor: RunExecutor,
    private readonly config: ComputeConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const nc = await this.nats.get();
    const stream = computeJobsStream(this.config.NATS_PREFIX);
    await ensureStream(nc, stream);
    const durable = `${this.config.NATS_PREFIX}_compute_workers`;
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
    this.messages = await consumer.consume({
      max_messages: limit,
      threshold_messages: Math.max(1, Math.floor(limit / 4)),
    });
    const messages = this.messages;
    this.loop = (async () => {
      for await (const msg of messages) {
        const handled = this.handle(msg)
          .catch((err: unknown) => this.logger.error({ msg: 'job not handled', err: String(err) }))
          .finally(() => this.inFlight.delete(handled));
        this.inFlight.add(handled);
        if (this.inFlight.size >= limit) await Promise.race(this.inFlight);
      }
    })();
    this.logger.log({
      msg: 'taking jobs',
      stream: stream.name,
      durable,
      isolates: this.config.COMPUTE_WORKER_ISOLATES,
    });
  }

  /**
   * Takes no more jobs, before the engine closes (the sandbox engine provider):
   * what it holds unstarted goes back. Not awaited: the iterator ends only once
   * this loop takes its next message, which may wait for a job the engine's
   * closing ends.
   */
  beforeApplicationShutdown(): void {
    this.messages
      ?.close()
      .catch((err: unknown) => this.logger.warn({ msg: 'job consumer not closed', err: String(err) }));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.messages?.close();
    await this.loop;
    await Promise.all(this.inFlight);
  }

  private async handle(msg: JsMsg): Promise<void> {
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
        await this.executor.executeQueued(scope, job.runId, job.run, msg);
        return;
      }
      let run;
      try {
        run = await this.executor.claim(scope, job.runId);
      } catch (err) {
        this.logger.warn({ msg: 'run not claimed; the job is redelivered', runId: job.runId, err: String(err) });
        msg.nak(1000);
        return;
      }
      msg.ack();
      if (run) await this.executor.execute(scope, run);
    });
  }
}
