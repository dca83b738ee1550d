import { Injectable } from '@nestjs/common';
import { metrics } from '@opentelemetry/api';
import type { AttemptOutcome } from './delivery-store.repository.js';

/** Seconds: a receiver answering at once, up to WEBHOOKS_ATTEMPT_TIMEOUT_MS's range. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The webhooks service's instruments (docs/runbooks.md, "Metrics"): OpenTelemetry
 * no-ops unless the process collects metrics. No attribute names a workspace or
 * a receiver (unbounded); a subscription's own figures are its health endpoint.
 */
@Injectable()
export class DeliveryMetrics {
  private readonly meter = metrics.getMeter('strata-webhooks');
  private readonly attempts = this.meter.createCounter('strata.webhooks.attempts', {
    description:
      'Delivery attempts by outcome: success, failure (an error or a non-2xx answer), rejected (circuit open)',
  });
  private readonly duration = this.meter.createHistogram('strata.webhooks.attempt.duration_seconds', {
    description: 'From sending an attempt to its answer or error, by outcome',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });

  attempted(outcome: AttemptOutcome): void {
    this.attempts.add(1, { outcome: outcome.kind });
    if (outcome.kind !== 'rejected') this.duration.record(outcome.durationMs / 1000, { outcome: outcome.kind });
  }

  /** Attempts sent and not yet answered, read when metrics are collected. */
  observeInFlight(count: () => number): void {
    this.meter
      .createObservableGauge('strata.webhooks.attempts.in_flight', {
        description: 'Attempts sent and not yet answered',
      })
      .addCallback((result) => result.observe(count()));
  }
}
