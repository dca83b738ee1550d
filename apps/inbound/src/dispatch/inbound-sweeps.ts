import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { issueWorkspaceScope } from '@strata/db';
import { Clock, PeriodicTask } from '@strata/platform';
import { InboundEventsRepository } from '../events/inbound-events.repository.js';
import { InboundConfig } from '../inbound.config.js';
import { ArrivalDispatcher } from './arrival-dispatcher.js';

const BATCH = 100;

/**
 * The replica-safe redispatch sweep (every INBOUND_SWEEP_INTERVAL_MS on every replica with
 * INBOUND_SWEEPER_ENABLED): arrivals still `received` or `queued` after
 * INBOUND_REDISPATCH_AFTER_MS (a crash between store and dispatch, compute unreachable)
 * are dispatched again; compute queues at most one run per arrival, so replicas
 * overlapping do no harm. Retention is InboundRetention's.
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

  /** One pass; answers what it did (tests call it). */
  async sweep(): Promise<{ redispatched: number }> {
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
    if (redispatched) this.logger.log({ msg: 'inbound sweep', redispatched });
    return { redispatched };
  }
}
