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
 * A worker that answers busy was full when the offer reached it; another may
 * not be (NATS picks a member of the group at random, the offering worker
 * itself included).
 */
const ATTEMPTS = 3;

/**
 * Offers an event's run straight to a worker with a free background isolate
 * (core NATS request/reply on the event-run queue group): the worker writes
 * the run and its (event, trigger) pair and starts it, which spares the run
 * the job queue's hop and a separate write here. Whether a worker took it
 * (or found the pair started already); false when every worker asked was
 * full (three asked at most), none runs, none answered within
 * `COMPUTE_EVENT_OFFER_TIMEOUT_MS` in all, or the run cannot
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
      const offer = JSON.stringify({ runId: run.id, workspaceSlug: scope.workspace, eventId, run: carried });
      const deadline = performance.now() + timeout;
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const remaining = Math.max(1, Math.round(deadline - performance.now()));
        const answer = await nc.request(computeEventRunSubject(this.config.NATS_PREFIX), offer, {
          timeout: remaining,
          headers: injectTraceContext(),
        });
        const { kind } = answer.json<EventRunReply>();
        if (kind !== 'busy') return kind === 'started' || kind === 'known';
      }
      return false;
    } catch (err) {
      const expected = (err instanceof RequestError && err.isNoResponders()) || err instanceof TimeoutError;
      if (!expected) this.logger.warn({ msg: 'event run not offered; it is queued', runId: run.id, err: String(err) });
      return false;
    }
  }
}
