import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import {
  consumerOfInterestsSubject,
  eventInterestsAddSubject,
  eventInterestsReplaceSubject,
  parseAddEventInterests,
  parseReplaceEventInterests,
  type EventInterestsReply,
} from '@strata/contracts';
import { Transactions } from '@strata/db';
import { serveRequests } from '@strata/events';
import { NatsConnectionHolder } from '@strata/platform';
import { DataConfig } from '../data.config.js';
import { EventInterestsRepository } from './event-interests.repository.js';

/**
 * Answers the record-event consumers' `add` and `replace` of their interests
 * (core NATS request/reply, a queue group of the data replicas), after the
 * change committed: from the answer on, every event whose write commits is
 * routed by the relay as the interests say (docs/events.md, "Routed events").
 * A request that does not check is answered `{error}` and changes nothing.
 */
/** The subject names the consumer (what the NATS permissions pin a service to); the payload must agree. */
function sameConsumer(consumer: string, subject: string): void {
  if (consumerOfInterestsSubject(subject) !== consumer) throw new Error('the consumer is not the subject’s');
}

@Injectable()
export class EventInterestsDirectory implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('EventInterestsDirectory');
  private readonly subscriptions: Subscription[] = [];

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly transactions: Transactions,
    private readonly interests: EventInterestsRepository,
    private readonly config: DataConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const nc = await this.nats.get();
    const prefix = this.config.NATS_PREFIX;
    const queue = `${prefix}_data_event_interests`;
    const onError = (err: unknown) => this.logger.warn({ msg: 'event interests not changed', err: String(err) });
    this.subscriptions.push(
      serveRequests(nc, eventInterestsAddSubject(prefix, '*'), queue, (p, m) => this.add(p, m.subject), onError),
      serveRequests(
        nc,
        eventInterestsReplaceSubject(prefix, '*'),
        queue,
        (p, m) => this.replace(p, m.subject),
        onError,
      ),
    );
    await nc.flush();
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.subscriptions.map((s) => s.drain().catch(() => undefined)));
  }

  private async add(payload: unknown, subject: string): Promise<EventInterestsReply> {
    let request;
    try {
      request = parseAddEventInterests(payload);
      sameConsumer(request.consumer, subject);
    } catch (err) {
      return { error: (err as Error).message };
    }
    await this.transactions.run((tx) => this.interests.add(tx, request.consumer, request.interests));
    return { ok: true, count: request.interests.length };
  }

  private async replace(payload: unknown, subject: string): Promise<EventInterestsReply> {
    let request;
    try {
      request = parseReplaceEventInterests(payload);
      sameConsumer(request.consumer, subject);
    } catch (err) {
      return { error: (err as Error).message };
    }
    await this.transactions.run((tx) =>
      this.interests.replace(tx, request.consumer, request.workspaceSlug, request.interests),
    );
    return { ok: true, count: request.interests.length };
  }
}
