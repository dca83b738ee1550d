import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { JsMsg } from '@nats-io/jetstream';
import { issueWorkspaceScope } from '@strata/db';
import { consumeRecordEvents, type RunningConsumer } from '@strata/events';
import { NatsConnectionHolder } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import type { JsonObject } from '../json.js';
import { TriggerExecutions } from '../triggers/trigger-executions.service.js';
import { TriggerLookups } from '../triggers/trigger-lookups.js';
import { EventRunOffers } from './event-run-offers.js';

/** Which kind of compute process this is, for COMPUTE_EVENT_CONSUMERS: the API or a sandbox worker. */
export const COMPUTE_PROCESS = Symbol('ComputeProcess');
export type ComputeProcess = 'api' | 'worker';

/** A record event as far as matching needs it; the whole payload goes to the function untouched. */
export interface WatchedEvent {
  readonly event: string;
  readonly workspaceSlug: string;
  readonly recordSlug: string;
  readonly payload: JsonObject;
}

/** Narrows a message to a record event; anything else is terminated, not retried. */
export function parseWatchedEvent(payload: unknown): WatchedEvent {
  const p = payload as Record<string, unknown> | null;
  if (
    typeof p !== 'object' ||
    p === null ||
    Array.isArray(p) ||
    typeof p['event'] !== 'string' ||
    typeof p['workspaceSlug'] !== 'string' ||
    typeof p['recordSlug'] !== 'string'
  ) {
    throw new Error('not a record event');
  }
  return {
    event: p['event'],
    workspaceSlug: p['workspaceSlug'],
    recordSlug: p['recordSlug'],
    payload: p as JsonObject,
  };
}

/**
 * Event-driven triggers: a durable pull consumer on the record events, in the
 * processes COMPUTE_EVENT_CONSUMERS names (the workers by default). Each event
 * runs every live, unpaused trigger of its workspace watching its name and
 * collection, with the event payload exactly as published as `executionParams`.
 * A (event id, trigger) pair is recorded in its run's transaction, so a
 * redelivered event or a restarted consumer never runs a function twice for one
 * event and trigger. Events that match nothing (deleted or paused triggers) are
 * acknowledged and dropped.
 */
@Injectable()
export class TriggerEventConsumer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('TriggerEventConsumer');
  private consumer: RunningConsumer | undefined;

  constructor(
    private readonly nats: NatsConnectionHolder,
    private readonly lookups: TriggerLookups,
    private readonly executions: TriggerExecutions,
    private readonly offers: EventRunOffers,
    private readonly config: ComputeConfig,
    @Inject(COMPUTE_PROCESS) private readonly process: ComputeProcess,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.COMPUTE_EVENT_TRIGGERS_ENABLED || this.config.COMPUTE_EVENT_CONSUMERS !== this.process) return;
    const nc = await this.nats.get();
    this.consumer = await consumeRecordEvents(nc, {
      prefix: this.config.NATS_PREFIX,
      name: 'compute_triggers',
      parse: parseWatchedEvent,
      handle: (event, msg) => this.handle(event, msg),
      concurrency: this.config.COMPUTE_EVENT_CONCURRENCY,
      onError: (err, msg) =>
        this.logger.warn({ msg: 'record event not turned into runs', subject: msg.subject, err: String(err) }),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer?.stop();
  }

  private async handle(event: WatchedEvent, msg: JsMsg): Promise<void> {
    // The event's own workspace (taken from our record stream, published by the data service
    // for a change in that workspace): its triggers are looked up and run within it.
    const scope = issueWorkspaceScope(event.workspaceSlug);
    const eventId = msg.headers?.get('Nats-Msg-Id') || `seq:${msg.info.streamSequence}`;
    for (const { trigger, fn } of await this.lookups.watching(scope, event.event, event.recordSlug)) {
      // A trigger whose function is gone: nothing to run.
      if (!fn) continue;
      await this.executions.runForEvent(scope, trigger, fn, event.payload, eventId, (run) =>
        this.offers.offer(scope, run, eventId),
      );
    }
  }
}
