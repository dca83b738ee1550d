import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { issueWorkspaceScope } from '@strata/db';
import { Clock, PeriodicTask } from '@strata/platform';
import { InboundEventsRepository } from '../events/inbound-events.repository.js';
import { InboundConfig } from '../inbound.config.js';
import { ArrivalDispatcher } from './arrival-dispatcher.js';

const BATCH = 100;
const DAY_MS = 24 * 3600 * 1000;

/**
 * The replica-safe sweeps (every INBOUND_SWEEP_INTERVAL_MS on every replica with
 * INBOUND_SWEEPER_ENABLED):
 * - arrivals still `received` or `queued` after INBOUND_REDISPATCH_AFTER_MS (a crash
 *   between store and dispatch, compute unreachable) are dispatched again; compute
 *   queues at most one run per arrival, so replicas overlapping do no harm;
 * - arrivals older than INBOUND_EVENT_RETENTION_DAYS are deleted, in batches;
 * - plain HMAC signature claims past their window are deleted, in batches.
 */
@Injectable()
export class InboundSweeps implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('InboundSweeps');
  private readonly task: PeriodicTask;

  constructor(
    private readonly events: InboundEventsRepository,
    private readonly dispatcher: ArrivalDispatcher,
    private readonly clock: Clock,
    private readonly config: InboundConfig,
  ) {
    this.task = new PeriodicTask('InboundSweeps', config.INBOUND_SWEEP_INTERVAL_MS, () => this.sweep(), this.logger);
  }

  onApplicationBootstrap(): void {
    if (this.config.INBOUND_SWEEPER_ENABLED) this.task.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  /** One pass of both sweeps; answers what it did (tests call it). */
  async sweep(): Promise<{ redispatched: number; deleted: number; claimsDeleted: number }> {
    const now = this.clock.now().getTime();
    let redispatched = 0;
    const left = await this.events.undispatched(new Date(now - this.config.INBOUND_REDISPATCH_AFTER_MS), BATCH);
    for (const event of left) {
      // The workspace of an arrival row this sweep read.
      const scope = issueWorkspaceScope(event.workspaceSlug);
      try {
        await this.dispatcher.dispatch(scope, event);
        redispatched++;
      } catch (err) {
        this.logger.warn({ msg: 'arrival still not dispatched', id: event.id, err: String(err) });
        break;
      }
    }
    const before = new Date(now - this.config.INBOUND_EVENT_RETENTION_DAYS * DAY_MS);
    let deleted = 0;
    for (;;) {
      const n = await this.events.deleteBefore(before, 1000);
      deleted += n;
      if (n < 1000) break;
    }
    let claimsDeleted = 0;
    for (;;) {
      const n = await this.events.deleteExpiredClaims(new Date(now), 1000);
      claimsDeleted += n;
      if (n < 1000) break;
    }
    if (redispatched || deleted || claimsDeleted) {
      this.logger.log({ msg: 'inbound sweep', redispatched, deleted, claimsDeleted });
    }
    return { redispatched, deleted, claimsDeleted };
  }
}
