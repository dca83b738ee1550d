import { Injectable } from '@nestjs/common';
import { Clock, RetentionSweep, type RetentionRule } from '@strata/platform';
import { InboundConfig } from '../inbound.config.js';
import { InboundEventsRepository } from './inbound-events.repository.js';

const DAY_MS = 24 * 3_600_000;

/**
 * Deletes arrivals received more than INBOUND_EVENT_RETENTION_DAYS ago (with their entry
 * in the list of arrivals to dispatch) and plain HMAC signature claims whose window has
 * ended, every INBOUND_SWEEP_INTERVAL_MS on each replica with INBOUND_SWEEPER_ENABLED, on
 * the shared RetentionSweep (docs/inbound.md, "Retention").
 */
@Injectable()
export class InboundRetention extends RetentionSweep {
  constructor(
    private readonly events: InboundEventsRepository,
    private readonly config: InboundConfig,
    clock: Clock,
  ) {
    super('inbound retention', clock, {
      enabled: config.INBOUND_SWEEPER_ENABLED,
      intervalMs: config.INBOUND_SWEEP_INTERVAL_MS,
    });
  }

  protected rules(now: Date): readonly RetentionRule[] {
    const before = new Date(now.getTime() - this.config.INBOUND_EVENT_RETENTION_DAYS * DAY_MS);
    return [
      {
        table: 'inbound.inbound_events',
        // An arrival holds its sealed body (up to 512 KiB).
        batchSize: 500,
        deleteBatch: (limit) => this.events.deleteBefore(before, limit),
      },
      {
        table: 'inbound.signature_claims',
        deleteBatch: (limit) => this.events.deleteExpiredClaims(now, limit),
      },
    ];
  }
}
