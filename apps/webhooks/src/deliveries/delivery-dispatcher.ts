import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { parseDnsServers } from '@strata/egress';
import { PeriodicTask } from '@strata/platform';
import { breakerId, breakerOf } from '../breaker/circuit-policy.js';
import { ReceiverCircuits } from '../breaker/receiver-circuits.repository.js';
import { ReceiverClient } from '../receivers/receiver-client.js';
import { SubscriptionSecrets } from '../subscriptions/subscription-secrets.js';
import { WebhooksConfig } from '../webhooks.config.js';
import { DeliveryMetrics } from './delivery-metrics.js';
import { DeliveryStore, type AttemptOutcome, type ClaimedAttempt } from './delivery-store.repository.js';
import { signedHeaders } from './signed-headers.js';

/**
 * Sends due attempts: claims them (replicas share through SKIP LOCKED), keeps at
 * most WEBHOOKS_DELIVERY_CONCURRENCY in flight, signs each attempt afresh, and
 * records its outcome. New deliveries wake it; otherwise it looks every
 * WEBHOOKS_DISPATCH_INTERVAL_MS.
 */
@Injectable()
export class DeliveryDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('DeliveryDispatcher');
  private readonly task: PeriodicTask;
  private readonly client: ReceiverClient;
  private readonly inFlight = new Set<Promise<void>>();
  /** Attempts under way, the dispatcher's and the test deliveries' (`attempt` called directly). */
  private attempting = 0;

  constructor(
    private readonly store: DeliveryStore,
    private readonly circuits: ReceiverCircuits,
    private readonly secrets: SubscriptionSecrets,
    private readonly config: WebhooksConfig,
    private readonly metrics: DeliveryMetrics,
  ) {
    this.task = new PeriodicTask('delivery dispatch', config.WEBHOOKS_DISPATCH_INTERVAL_MS, () => this.pass());
    this.client = new ReceiverClient({
      timeoutMs: config.WEBHOOKS_ATTEMPT_TIMEOUT_MS,
      bodyMaxBytes: config.WEBHOOKS_RESPONSE_BODY_MAX_BYTES,
      allowPrivate: config.WEBHOOKS_ALLOW_PRIVATE_RECEIVERS,
      maxSockets: config.WEBHOOKS_DELIVERY_CONCURRENCY,
      dns: {
        servers: parseDnsServers(config.WEBHOOKS_DNS_SERVERS),
        timeoutMs: config.WEBHOOKS_DNS_TIMEOUT_MS,
        tries: config.WEBHOOKS_DNS_TRIES,
      },
    });
  }

  onApplicationBootstrap(): void {
    this.metrics.observeInFlight(() => this.attempting);
    if (this.config.WEBHOOKS_DISPATCHER_ENABLED) this.task.start(0);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task.stop();
    await Promise.allSettled([...this.inFlight]);
    this.client.close();
  }

  /** Looks for due attempts now (after new deliveries were written). */
  wake(): void {
    if (this.config.WEBHOOKS_DISPATCHER_ENABLED) this.task.wake();
  }

  private async pass(): Promise<void> {
    await this.store.failLostLastAttempts();
    const claimed = await this.store.claimDue(this.config.WEBHOOKS_DELIVERY_CONCURRENCY - this.inFlight.size);
    if (claimed.length === 0) return;
    const breakers = claimed.map((c) => breakerOf(c.delivery.workspace_slug, c.url));
    const open = await this.circuits.openAmong(breakers);
    claimed.forEach((claim, i) => this.track(this.attempt(claim, open.has(breakerId(breakers[i]!)))));
  }

  private track(attempt: Promise<void>): void {
    this.inFlight.add(attempt);
    void attempt.finally(() => {
      this.inFlight.delete(attempt);
      this.task.wake();
    });
  }

  /**
   * Makes one claimed attempt and records how it ended. `circuitOpen` is the
   * breaker of the delivery's workspace and receiver as read for the claim; it is
   * read here when not given.
   * Never throws: a failure to record leaves the lease to run out, and the
   * attempt then counts as interrupted.
   */
  async attempt(claim: ClaimedAttempt, circuitOpen?: boolean): Promise<void> {
    const { delivery } = claim;
    const breaker = breakerOf(delivery.workspace_slug, claim.url);
    const { receiver } = breaker;
    this.attempting++;
    try {
      const open = circuitOpen ?? (await this.circuits.openAmong([breaker])).has(breakerId(breaker));
      const outcome = open ? this.rejected(claim, receiver) : await this.send(claim, receiver);
      this.metrics.attempted(outcome);
      await this.store.recordOutcome(delivery, outcome);
    } catch (err) {
      this.logger.error({ msg: 'attempt not recorded', deliveryId: delivery.id, err: String(err) });
    } finally {
      this.attempting--;
    }
  }

  private rejected(claim: ClaimedAttempt, receiver: string): AttemptOutcome {
    this.logger.warn({
      msg: 'attempt rejected: circuit open',
      deliveryId: claim.delivery.id,
      attempt: claim.delivery.attempt_count,
      workspace: claim.delivery.workspace_slug,
      receiver,
    });
    return { kind: 'rejected', receiver, error: `Circuit open for ${receiver}: attempt not sent` };
  }

  private async send(claim: ClaimedAttempt, receiver: string): Promise<AttemptOutcome> {
    const { delivery } = claim;
    const secrets = [this.secrets.open(delivery.subscription_id, claim.sealedSecret)];
    if (claim.sealedPreviousSecret)
      secrets.push(this.secrets.open(delivery.subscription_id, claim.sealedPreviousSecret));
    const requestHeaders = signedHeaders({
      deliveryId: delivery.id,
      event: delivery.event,
      attempt: delivery.attempt_count,
      isTest: delivery.is_test,
      secrets,
      body: delivery.request_body,
      // The wall clock, not the service's Clock: receivers check the timestamp against their own clocks.
      nowSeconds: Math.floor(Date.now() / 1000),
    });
    const result = await this.client.post(claim.url, requestHeaders, delivery.request_body);
    if (result.kind === 'error') {
      return {
        kind: 'failure',
        receiver,
        httpStatus: null,
        error: result.error,
        requestHeaders,
        responseBody: null,
        durationMs: result.durationMs,
      };
    }
    const ok = result.status >= 200 && result.status < 300;
    return {
      kind: ok ? 'success' : 'failure',
      receiver,
      httpStatus: result.status,
      error: ok ? null : answeredError(result.status),
      requestHeaders,
      responseBody: result.body,
      durationMs: result.durationMs,
    };
  }
}

function answeredError(status: number): string {
  const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
  return `Receiver answered HTTP ${status}${redirect}`;
}
