import { Injectable, Logger } from '@nestjs/common';
import type { KeyRing } from '@strata/crypto';
import type { WorkspaceScope } from '@strata/db';
import { Clock, keyRingOf } from '@strata/platform';
import type { HttpTriggerDispatchReply } from '@strata/contracts';
import { ComputeLink } from '../arrivals/compute-link.js';
import { InboundConfig } from '../inbound.config.js';
import { bodyOf, maskedHeaders } from '../events/arrival-params.js';
import { openArrival } from '../events/arrival-seal.js';
import type { InboundEventEntity } from '../events/inbound-event.entity.js';
import { InboundEventsRepository } from '../events/inbound-events.repository.js';

/**
 * Hands a stored arrival to compute, which queues its run at most once per
 * arrival, and records what became of it: `dispatched` (the job reached the
 * workers' queue), `queued` (the run is recorded, its job not yet published), or
 * `dropped_dispatch` (trigger paused or gone, function gone, executions limit).
 * Compute not answering leaves the arrival `received` for the sweep.
 */
@Injectable()
export class ArrivalDispatcher {
  private readonly logger = new Logger('ArrivalDispatcher');
  private readonly ring: KeyRing;

  constructor(
    private readonly link: ComputeLink,
    private readonly events: InboundEventsRepository,
    private readonly clock: Clock,
    config: InboundConfig,
  ) {
    this.ring = keyRingOf(config);
  }

  async dispatch(scope: WorkspaceScope, event: InboundEventEntity): Promise<HttpTriggerDispatchReply> {
    const opened = openArrival(this.ring, event);
    // One auto-persist attempt per arrival, taken before asking: never retried automatically.
    const persist = event.persistStatus === 'pending' && (await this.events.takePersist(scope, event.id));
    const reply = await this.link.dispatch(scope, {
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
    });
    if (persist) {
      await this.events.recordPersist(
        scope,
        event.id,
        reply.persist === undefined
          ? { status: 'skipped' }
          : reply.persist.status === 'succeeded'
            ? { status: 'succeeded', recordId: reply.persist.recordId }
            : { status: 'failed', error: reply.persist.error },
      );
    }
    const at = this.clock.now();
    if (reply.status === 'dropped') {
      await this.events.recordDispatch(scope, event.id, {
        status: 'dropped_dispatch',
        error: reply.reason,
        ...(reply.runId ? { runId: reply.runId } : {}),
        at,
      });
    } else {
      await this.events.recordDispatch(scope, event.id, {
        status: reply.status,
        runId: reply.runId,
        jobId: reply.jobId,
        at,
      });
    }
    return reply;
  }

  /** Dispatches without waiting: a failure is logged and the arrival stays `received` for the sweep. */
  dispatchLater(scope: WorkspaceScope, event: InboundEventEntity): void {
    this.dispatch(scope, event).catch((err: unknown) =>
      this.logger.warn({ msg: 'arrival not dispatched; the sweep will', id: event.id, err: String(err) }),
    );
  }
}
