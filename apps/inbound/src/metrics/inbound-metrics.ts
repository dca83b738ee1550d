import { Injectable } from '@nestjs/common';
import { metrics } from '@opentelemetry/api';

/** What became of a request to a capture URL. */
export type ArrivalOutcome = 'stored' | 'duplicate' | 'refused' | 'not_found';

/**
 * The inbound service's instruments (docs/runbooks.md, "Metrics"): OpenTelemetry
 * no-ops unless the process collects metrics. No attribute names a workspace or
 * a path (unbounded, and a scanner would choose them).
 */
@Injectable()
export class InboundMetrics {
  private readonly meter = metrics.getMeter('strata-inbound');
  private readonly arrivals = this.meter.createCounter('strata.inbound.arrivals', {
    description:
      'Requests to capture URLs: stored, duplicate (a delivery id, or a plain HMAC signature within its replay window, seen before), refused (a signature rejected and not captured), not_found (no http-trigger there); by signature result',
  });
  private readonly dispatches = this.meter.createCounter('strata.inbound.dispatches', {
    description: 'Arrivals handed to compute, by what compute answered: dispatched, queued or dropped_dispatch',
  });

  arrived(outcome: ArrivalOutcome, signature: 'verified' | 'unsigned' | 'rejected' | 'none'): void {
    this.arrivals.add(1, { outcome, signature });
  }

  dispatched(status: 'dispatched' | 'queued' | 'dropped_dispatch'): void {
    this.dispatches.add(1, { status });
  }
}
