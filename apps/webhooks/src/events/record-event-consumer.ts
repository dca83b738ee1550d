import { issueWorkspaceScope } from '@strata/db';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { JsMsg } from '@nats-io/jetstream';
import type { RecordEvent } from '@strata/contracts';
import { consumeRecordEvents, type RunningConsumer } from '@strata/events';
import { NatsConnectionHolder } from '@strata/platform';
import { bodyOfEvent } from '../deliveries/delivery-body.js';
import { DeliveryDispatcher } from '../deliveries/delivery-dispatcher.js';
import { DeliveryStore } from '../deliveries/delivery-store.repository.js';
import { SubscriptionOwners } from '../owners/subscription-owners.js';
import { WebhooksConfig } from '../webhooks.config.js';

/**
 * The durable JetStream consumer of record events: each event a subscription can
 * name becomes one delivery per matching subscription. The event id
 * (`Nats-Msg-Id`, the data service's outbox id) is unique per subscription in
 * webhooks.deliveries, so a redelivered event creates nothing twice. The message
 * is acked only after the deliveries are committed.
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
    private readonly config: WebhooksConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.WEBHOOKS_CONSUMER_ENABLED) return;
    const nc = await this.nats.get();
    this.consumer = await consumeRecordEvents(nc, {
      prefix: this.config.NATS_PREFIX,
      name: 'webhooks',
      parse: parseRecordEvent,
      handle: (event, msg) => this.handle(event, msg),
      concurrency: this.config.WEBHOOKS_CONSUMER_CONCURRENCY,
      onError: (err, msg) =>
        this.logger.warn({ msg: 'record event not turned into deliveries', subject: msg.subject, err: String(err) }),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer?.stop();
  }

  private async handle(event: RecordEvent, msg: JsMsg): Promise<void> {
    const body = bodyOfEvent(event);
    if (!body) return;
    // The stream sequence identifies the message when a publisher set no id.
    const eventId = msg.headers?.get('Nats-Msg-Id') || `seq:${msg.info.streamSequence}`;
    // The event's own workspace (an event taken from our record stream, published by the
    // data service for a change in that workspace): its deliveries are made within it.
    const scope = issueWorkspaceScope(event.workspaceSlug);
    // A subscription acts for its owner: it gets a collection's events only while the owner may list
    // that collection's records (docs/webhooks.md). A lookup that fails throws: the event comes again.
    const subscribers = await this.store.subscribersOf(scope, event.event, event.recordSlug, event.timestamp);
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
