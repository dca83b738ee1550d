import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { issueWorkspaceScope } from '@strata/db';
import { runRecordEventConsumer, type RunningConsumer } from '@strata/events';
import { NatsConnectionHolder } from '@strata/platform';
import { ComputeConfig } from '../compute.config.js';
import type { JsonObject } from '../json.js';
import { TriggerExecutions } from '../triggers/trigger-executions.service.js';
import { TriggerInterests } from '../triggers/trigger-interests.js';
import { COMPUTE_EVENT_CONSUMER } from '../triggers/trigger-interests.repository.js';
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
 * Event-driven triggers: a durable pull consumer of the record events routed to
 * compute (`<prefix>_routed_compute`: the collections its live, unpaused
 * event-driven triggers watch, docs/events.md, "Routed events"), in the
 * processes COMPUTE_EVENT_CONSUMERS names (the workers by default), started
 * after the interests were registered; the durable of the whole records stream
 * an earlier version used (`<prefix>_compute_triggers`) is drained, then
 * deleted. Each event
 * runs every live, unpaused trigger of its workspace watching its name and
 * collection, with the event payload exactly as published as `executionParams`.
 * A (event id, trigger) pair is recorded in its run's transaction, so a
 * redelivered event or a restarted consumer never runs a function twice for one
 * event and trigger. Events that match nothing (deleted or paused triggers) are
 * acknowledged and dropped, once the database (not the kept lookup, which may
 * predate a trigger just created) says so.
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
    private readonly interests: TriggerInterests,
    private readonly config: ComputeConfig,
    @Inject(COMPUTE_PROCESS) private readonly process: ComputeProcess,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.config.COMPUTE_EVENT_TRIGGERS_ENABLED || this.config.COMPUTE_EVENT_CONSUMERS !== this.process) return;
    this.consumer = runRecordEventConsumer(await this.nats.get(), {
      prefix: this.config.NATS_PREFIX,
      consumer: COMPUTE_EVENT_CONSUMER,
      legacyDurable: 'compute_triggers',
      register: () => this.interests.replaceAll(),
      parse: parseWatchedEvent,
      handle: (event, eventId) => this.handle(event, eventId),
      concurrency: this.config.COMPUTE_EVENT_CONCURRENCY,
      onError: (err, msg) =>
        this.logger.warn({ msg: 'record event not turned into runs', subject: msg.subject, err: String(err) }),
      onProgress: (what, err) =>
        this.logger.log({ msg: `record events: ${what}`, err: err === undefined ? undefined : String(err as Error) }),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer?.stop();
  }

  private async handle(event: WatchedEvent, eventId: string): Promise<void> {
    // The event's own workspace (taken from our record stream, published by the data service
    // for a change in that workspace): its triggers are looked up and run within it.
    const scope = issueWorkspaceScope(event.workspaceSlug);
    let watching = await this.lookups.watching(scope, event.event, event.recordSlug);
    if (watching.length === 0) {
      // Routed to us, so a trigger watched the collection when the event was written: one may still be
      // committing (it added the interest first), or this replica may keep an answer read before it
      // existed and not have heard of it yet. Once the workspace's changes in flight are over, read
      // the database itself.
      await this.interests.settled(scope);
      watching = await this.lookups.watching(scope, event.event, event.recordSlug, { fresh: true });
    }
    for (const { trigger, fn } of watching) {
      // A trigger whose function is gone: nothing to run.
      if (!fn) continue;
      await this.executions.runForEvent(scope, trigger, fn, event.payload, eventId, (run) =>
        this.offers.offer(scope, run, eventId),
      );
    }
  }
}
