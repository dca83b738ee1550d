import { Injectable, Logger } from '@nestjs/common';
import type { KeyRing } from '@strata/crypto';
import type { WorkspaceScope } from '@strata/db';
import { Clock, keyRingOf } from '@strata/platform';
import type { HttpTriggerDispatch, HttpTriggerDispatchReply } from '@strata/contracts';
import { ComputeLink } from '../arrivals/compute-link.js';
import { InboundConfig } from '../inbound.config.js';
import { bodyOf, maskedHeaders } from '../events/arrival-params.js';
import { openArrival, type OpenedArrival } from '../events/arrival-seal.js';
import type { InboundEventEntity } from '../events/inbound-event.entity.js';
import { InboundEventsRepository, type DispatchChange } from '../events/inbound-events.repository.js';
import { Coalescer } from '../batching/coalescer.js';
import { InboundMetrics } from '../metrics/inbound-metrics.js';

/** One arrival's dispatch, as it waits for its batch. */
interface Dispatch {
  readonly request: Omit<HttpTriggerDispatch, 'workspaceSlug'>;
  /** Its JSON size, against the batch's byte cap. */
  readonly bytes: number;
}

/** A batch's caps: under NATS's default 1 MiB message, with room for the envelope. */
const BATCH_ITEMS = 100;
const BATCH_BYTES = 768 * 1024;
/**
 * Batches of one workspace in flight at once. One: under load the next batch
 * gathers everything that came meanwhile, so the work per arrival falls as the
 * load rises (with two in flight, batches were half the size and throughput
 * about a fifth lower: docs/performance.md, inbound).
 */
const BATCHES_IN_FLIGHT = 1;

/**
 * Hands stored arrivals to compute, which queues each one's run at most once,
 * and records what became of them: `dispatched` (the job reached the workers'
 * queue), `queued` (the run is recorded, its job not yet published), or
 * `dropped_dispatch` (trigger paused or gone, function gone, executions limit).
 * Compute not answering leaves an arrival `received` for the sweep.
 *
 * Arrivals go in batches while a batch is in flight (one request to compute and
 * one statement here for the whole batch); an arrival that finds no batch in
 * flight goes at once, alone.
 */
@Injectable()
export class ArrivalDispatcher {
  private readonly logger = new Logger('ArrivalDispatcher');
  private readonly ring: KeyRing;
  private readonly batches: Coalescer<WorkspaceScope, Dispatch, HttpTriggerDispatchReply>;

  constructor(
    private readonly link: ComputeLink,
    private readonly events: InboundEventsRepository,
    private readonly clock: Clock,
    config: InboundConfig,
    private readonly metrics: InboundMetrics,
  ) {
    this.ring = keyRingOf(config);
    this.batches = new Coalescer((scope, ds) => this.send(scope, ds), {
      id: (scope) => scope.workspace,
      maxInFlight: BATCHES_IN_FLIGHT,
      maxItems: BATCH_ITEMS,
      maxBytes: BATCH_BYTES,
      sizeOf: (d) => d.bytes,
    });
  }

  /** `opened`: the arrival's body and headers when the caller has them (it just sealed them); opened here otherwise. */
  async dispatch(
    scope: WorkspaceScope,
    event: InboundEventEntity,
    opened: OpenedArrival = openArrival(this.ring, event),
  ): Promise<HttpTriggerDispatchReply> {
    // One auto-persist attempt per arrival, taken before asking: never retried automatically.
    const persist = event.persistStatus === 'pending' && (await this.events.takePersist(scope, event.id));
    const request: Dispatch['request'] = {
      persist,
      triggerId: event.triggerId,
      inboundEventId: event.id,
      correlationId: event.correlationId,
      jobId: event.jobId!,
      executionParams: {
        ...bodyOf(opened.body, event.contentType),
        headers: maskedHeaders(opened.headers),
        inboundEventId: event.id,
        correlationId: event.correlationId,
        receivedAt: event.receivedAt.toISOString(),
        ...(event.replayedFrom ? { replayedFrom: event.replayedFrom } : {}),
      },
    };
    return this.batches.submit(scope, { request, bytes: Buffer.byteLength(JSON.stringify(request)) });
  }

  /** Dispatches without waiting: a failure is logged and the arrival stays `received` for the sweep. */
  dispatchLater(scope: WorkspaceScope, event: InboundEventEntity, opened?: OpenedArrival): void {
    this.dispatch(scope, event, opened).catch((err: unknown) =>
      this.logger.warn({ msg: 'arrival not dispatched; the sweep will', id: event.id, err: String(err) }),
    );
  }

  /**
   * One batch: compute queues the runs; the auto-persists' outcomes are
   * recorded, then every arrival's dispatch in one statement (so an arrival
   * seen dispatched has its persist outcome too).
   */
  private async send(scope: WorkspaceScope, ds: Dispatch[]): Promise<HttpTriggerDispatchReply[]> {
    const replies = await this.link.dispatch(
      scope,
      ds.map((d) => d.request),
    );
    await Promise.all(
      ds.map(async (d, i) => {
        if (!d.request.persist) return;
        const persisted = replies[i]!.persist;
        await this.events.recordPersist(
          scope,
          d.request.inboundEventId,
          persisted === undefined
            ? { status: 'skipped' }
            : persisted.status === 'succeeded'
              ? { status: 'succeeded', recordId: persisted.recordId }
              : { status: 'failed', error: persisted.error },
        );
      }),
    );
    const at = this.clock.now();
    const changes = ds.map((d, i) => ({ id: d.request.inboundEventId, change: changeOf(replies[i]!, at) }));
    // Counted as written: an arrival the sweep dispatches again, or that another dispatch moved first, is not counted twice.
    for (const { status } of await this.events.recordDispatches(scope, changes)) this.metrics.dispatched(status);
    return [...replies];
  }
}

function changeOf(reply: HttpTriggerDispatchReply, at: Date): DispatchChange {
  if (reply.status === 'dropped') {
    return { status: 'dropped_dispatch', error: reply.reason, ...(reply.runId ? { runId: reply.runId } : {}), at };
  }
  return { status: reply.status, runId: reply.runId, jobId: reply.jobId, at };
}
