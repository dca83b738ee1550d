import { Injectable, Logger } from '@nestjs/common';
import { RequestError, TimeoutError } from '@nats-io/transport-node';
import { computeEventRunSubject, type EventRunReply } from '@strata/contracts';
import type { WorkspaceScope } from '@strata/db';
import { injectTraceContext } from '@strata/events';
import { NatsConnectionHolder } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import { carriedRun } from '../runs/carried-run.js';
import type { NewRun } from '../runs/runs.repository.js';

/**
 * Offers an event's run straight to a worker with a free background isolate
 * (core NATS request/reply on the event-run queue group): the worker writes
 * the run and its (event, trigger) pair and starts it, which spares the run
 * the job queue's hop and a separate write here. Whether a worker took it
 * (or found the pair started already); false when every worker is full, none
 * runs, none answered in `COMPUTE_EVENT_OFFER_TIMEOUT_MS`, or the run cannot
 * travel in a message: the caller then queues it, and the pair's unique key
 * lets only one of the two start it.
 */
@Injectable()
export class EventRunOffers {
  private readonly logger = new Logger('EventRunOffers');

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly config: ComputeConfig,
  ) {}

  async offer(scope: WorkspaceScope, run: NewRun, eventId: string): Promise<boolean> {
    const timeout = this.config.COMPUTE_EVENT_OFFER_TIMEOUT_MS;
    const carried = run.refused ? undefined : carriedRun(run);
    if (timeout === 0 || !carried) return false;
    try {
      const nc = await this.nats.get();
      const answer = await nc.request(
        computeEventRunSubject(this.config.NATS_PREFIX),
        JSON.stringify({ runId: run.id, workspaceSlug: scope.workspace, eventId, run: carried }),
        { timeout, headers: injectTraceContext() },
      );
      const { kind } = answer.json<EventRunReply>();
      return kind === 'started' || kind === 'known';
    } catch (err) {
      const expected = (err instanceof RequestError && err.isNoResponders()) || err instanceof TimeoutError;
      if (!expected) this.logger.warn({ msg: 'event run not offered; it is queued', runId: run.id, err: String(err) });
      return false;
    }
  }
}
