import { issueWorkspaceScope } from '@strata/db';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { RecordEvent } from '@strata/contracts';
import { runRecordEventConsumer, type RunningConsumer } from '@strata/events';
import { NatsConnectionHolder } from '@strata/platform';
import { bodyOfEvent } from '../deliveries/delivery-body.js';
import { DeliveryDispatcher } from '../deliveries/delivery-dispatcher.js';
import { DeliveryStore } from '../deliveries/delivery-store.repository.js';
import { SubscriptionOwners } from '../owners/subscription-owners.js';
import { SubscriptionInterests } from '../subscriptions/subscription-interests.js';
import { WEBHOOKS_EVENT_CONSUMER } from '../subscriptions/subscription-interests.repository.js';
import { WebhooksConfig } from '../webhooks.config.js';

/**
 * The durable JetStream consumer of the record events routed to the webhooks
 * service (the workspaces and collections its subscriptions need:
 * docs/events.md, "Routed events"): each event a subscription can name becomes
 * one delivery per matching subscription. The event id (the data service's
 * outbox id) is unique per subscription in webhooks.deliveries, so a
 * redelivered event creates nothing twice. The message is acked only after the
 * deliveries are committed.
 *
 * At start the interests are replaced from the subscriptions before the routed
 * durable starts; the durable of the whole records stream an earlier version
 * used (`<p>_webhooks`) is then drained with the same handler and deleted.
 */
@Injectable()
export class RecordEventConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('RecordEventConsumer');
  private consumer: RunningConsumer | undefined;

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly store: DeliveryStore,
    private readonly dispatcher: DeliveryDispatcher,
    private readonly owners: SubscriptionOwners,
    private readonly interests: SubscriptionInterests,
    private readonly config: WebhooksConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.WEBHOOKS_CONSUMER_ENABLED) return;
    this.consumer = runRecordEventConsumer(await this.nats.get(), {
      prefix: this.config.NATS_PREFIX,
      consumer: WEBHOOKS_EVENT_CONSUMER,
      legacyDurable: 'webhooks',
      register: () => this.interests.replaceAll(),
      parse: parseRecordEvent,
      handle: (event, eventId) => this.handle(event, eventId),
      concurrency: this.config.WEBHOOKS_CONSUMER_CONCURRENCY,
      onError: (err, msg) =>
        this.logger.warn({ msg: 'record event not turned into deliveries', subject: msg.subject, err: String(err) }),
      onProgress: (what, err) =>
        this.logger.log({ msg: `record events: ${what}`, err: err === undefined ? undefined : String(err as Error) }),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer?.stop();
  }

  private async handle(event: RecordEvent, eventId: string): Promise<void> {
    const body = bodyOfEvent(event);
    if (!body) return;
    // The event's own workspace (an event taken from our record stream, published by the
    // data service for a change in that workspace): its deliveries are made within it.
    const scope = issueWorkspaceScope(event.workspaceSlug);
    // A subscription acts for its owner: it gets a collection's events only while the owner may list
    // that collection's records (docs/webhooks.md). A lookup that fails throws: the event comes again.
    let subscribers = await this.store.subscribersOf(scope, event.event, event.recordSlug, event.timestamp);
    if (subscribers.length === 0) {
      // Routed to us, so a subscription wanted the workspace when it was written: one may still be
      // committing (it added the interest first). Once its change is over, read again.
      await this.interests.settled(scope);
      subscribers = await this.store.subscribersOf(scope, event.event, event.recordSlug, event.timestamp);
    }
    const allowed: string[] = [];
    for (const s of subscribers) {
      if (await this.owners.mayList(scope, s.owner, event.recordSlug)) allowed.push(s.id);
    }
    const created = await this.store.createForEvent(
      scope,
      allowed,
      eventId,
      event.event,
      event.recordSlug,
      JSON.stringify(body),
      event.timestamp,
    );
    if (created > 0) this.dispatcher.wake();
  }
}

/** Narrows a message to a record event; refuses (so the message is terminated) anything without the common fields. */
export function parseRecordEvent(payload: unknown): RecordEvent {
  const p = payload as Record<string, unknown> | null;
  if (
    typeof p !== 'object' ||
    p === null ||
    typeof p['event'] !== 'string' ||
    typeof p['workspaceSlug'] !== 'string' ||
    typeof p['recordSlug'] !== 'string' ||
    typeof p['timestamp'] !== 'string'
  )
    throw new Error('not a record event: event, workspaceSlug, recordSlug and timestamp are required');
  const perRecord = ['record_created', 'record_updated', 'record_deleted'].includes(p['event']);
  if (perRecord && (typeof p['recordId'] !== 'string' || typeof p['data'] !== 'object' || p['data'] === null))
    throw new Error(`${p['event']} without recordId and data`);
  if (p['event'] === 'record_updated' && typeof (p['data'] as Record<string, unknown>)['after'] !== 'object')
    throw new Error('record_updated without data.after');
  return p as unknown as RecordEvent;
}
